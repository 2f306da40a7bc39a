-- langgraph: test_pregel.py::test_nested_graph_xray
-- deliberate: a node's data.id names superstep's class ({"superstep", "Node"}),
-- not a Python class; lg.python_graph maps it before comparing (docs/subgraphs.md).
-- The snapshots (__snapshots__/test_pregel.ambr) are restated below.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function logic() end

local tool_two_graph = sst.StateGraph{ my_key = sst.reducers.append, market = sst.reducers.replace }
tool_two_graph:add_node("tool_two_slow", logic)
tool_two_graph:add_node("tool_two_fast", logic)
tool_two_graph:set_conditional_entry_point(function(s)
  return s.market == "DE" and "tool_two_slow" or "tool_two_fast"
end, { "tool_two_slow", "tool_two_fast" })
local tool_two = tool_two_graph:compile()

local graph = sst.StateGraph{ my_key = sst.reducers.append, market = sst.reducers.replace }
graph:add_node("tool_one", logic)
graph:add_node("tool_two", tool_two)
graph:add_node("tool_three", logic)
graph:set_conditional_entry_point(function() return "tool_one" end,
                                  { "tool_one", "tool_two", "tool_three" })
local app = graph:compile()

local function runnable(name)
  return { data = { id = { "langgraph", "_internal", "_runnable", "RunnableCallable" }, name = name },
           id = name, type = "runnable" }
end

T.eq(lg.python_graph(app:get_graph{ xray = true }:to_json()), {
  edges = {
    { conditional = true, source = "__start__", target = "tool_one" },
    { conditional = true, source = "__start__", target = "tool_three" },
    { conditional = true, source = "__start__", target = "tool_two:__start__" },
    { source = "tool_one", target = "__end__" },
    { source = "tool_three", target = "__end__" },
    { source = "tool_two:__end__", target = "__end__" },
    { conditional = true, source = "tool_two:__start__", target = "tool_two:tool_two_fast" },
    { conditional = true, source = "tool_two:__start__", target = "tool_two:tool_two_slow" },
    { source = "tool_two:tool_two_fast", target = "tool_two:__end__" },
    { source = "tool_two:tool_two_slow", target = "tool_two:__end__" },
  },
  nodes = {
    runnable("__start__"),
    runnable("tool_one"),
    runnable("tool_three"),
    { id = "__end__" },
    runnable("tool_two:__start__"),
    runnable("tool_two:tool_two_slow"),
    runnable("tool_two:tool_two_fast"),
    { id = "tool_two:__end__" },
  },
}, "to_json")

T.eq(app:get_graph{ xray = true }:draw_mermaid(), table.concat({
  "---",
  "config:",
  "  flowchart:",
  "    curve: linear",
  "---",
  "graph TD;",
  "\t__start__([<p>__start__</p>]):::first",
  "\ttool_one(tool_one)",
  "\ttool_three(tool_three)",
  "\t__end__([<p>__end__</p>]):::last",
  "\t__start__ -.-> tool_one;",
  "\t__start__ -.-> tool_three;",
  "\t__start__ -.-> tool_two\\3a__start__;",
  "\ttool_one --> __end__;",
  "\ttool_three --> __end__;",
  "\ttool_two\\3a__end__ --> __end__;",
  "\tsubgraph tool_two",
  "\ttool_two\\3a__start__(<p>__start__</p>)",
  "\ttool_two\\3atool_two_slow(tool_two_slow)",
  "\ttool_two\\3atool_two_fast(tool_two_fast)",
  "\ttool_two\\3a__end__(<p>__end__</p>)",
  "\ttool_two\\3a__start__ -.-> tool_two\\3atool_two_fast;",
  "\ttool_two\\3a__start__ -.-> tool_two\\3atool_two_slow;",
  "\ttool_two\\3atool_two_fast --> tool_two\\3a__end__;",
  "\ttool_two\\3atool_two_slow --> tool_two\\3a__end__;",
  "\tend",
  "\tclassDef default fill:#f2f0ff,line-height:1.2",
  "\tclassDef first fill-opacity:0",
  "\tclassDef last fill:#bfb6fc",
  "",
}, "\n"), "draw_mermaid")
T.finish()
