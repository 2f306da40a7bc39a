-- langgraph: test_pregel.py::test_nested_graph
-- The drawing snapshots (__snapshots__/test_pregel.ambr) are restated below;
-- the `app | RunnablePassthrough()` chain (LangChain composition) is left out. `never_called` is a Python callable
-- carried through the state; here it is a string sentinel (functions cannot
-- be stored in a superstep state).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local never_called = "never_called sentinel"

local inner = sst.StateGraph{ my_key = sst.reducers.replace, my_other_key = sst.reducers.replace }
inner:add_node("up", function(state)
  return { my_key = state.my_key .. " there", my_other_key = state.my_key }
end)
inner:set_entry_point("up")
inner:set_finish_point("up")

local graph = sst.StateGraph{ my_key = sst.reducers.replace, never_called = sst.reducers.replace }
graph:add_node("inner", inner:compile())
graph:add_node("side", function(state) return { my_key = state.my_key .. " and back again" } end)
graph:set_entry_point("inner")
graph:add_edge("inner", "side")
graph:set_finish_point("side")
local app = graph:compile()

T.eq(app:get_graph():draw_mermaid{ with_styles = false }, table.concat({
  "graph TD;",
  "\t__start__ --> inner;",
  "\tinner --> side;",
  "\tside --> __end__;",
  "",
}, "\n"), "draw_mermaid(with_styles=False)")
T.eq(app:get_graph{ xray = true }:draw_mermaid(), table.concat({
  "---",
  "config:",
  "  flowchart:",
  "    curve: linear",
  "---",
  "graph TD;",
  "\t__start__([<p>__start__</p>]):::first",
  "\tside(side)",
  "\t__end__([<p>__end__</p>]):::last",
  "\t__start__ --> inner\\3aup;",
  "\tinner\\3aup --> side;",
  "\tside --> __end__;",
  "\tsubgraph inner",
  "\tinner\\3aup(up)",
  "\tend",
  "\tclassDef default fill:#f2f0ff,line-height:1.2",
  "\tclassDef first fill-opacity:0",
  "\tclassDef last fill:#bfb6fc",
  "",
}, "\n"), "draw_mermaid xray")

T.eq(app:invoke({ my_key = "my value", never_called = never_called }),
     { my_key = "my value there and back again", never_called = never_called }, "invoke")
T.eq(lg.collect(app:stream({ my_key = "my value", never_called = never_called }, nil, "updates")), {
  { inner = { my_key = "my value there" } },
  { side = { my_key = "my value there and back again" } },
}, "updates")
T.eq(lg.collect(app:stream({ my_key = "my value", never_called = never_called }, nil, "values")), {
  { my_key = "my value", never_called = never_called },
  { my_key = "my value there", never_called = never_called },
  { my_key = "my value there and back again", never_called = never_called },
}, "values")
T.finish()
