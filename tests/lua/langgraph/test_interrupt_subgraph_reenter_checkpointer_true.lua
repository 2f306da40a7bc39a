-- langgraph: test_pregel.py::test_interrupt_subgraph_reenter_checkpointer_true
-- The TypedDict states are closed schemas (LangGraph drops undeclared keys).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local called, bar_values = {}, {}

local sb = sst.StateGraph({ foo = sst.reducers.replace, bar = sst.reducers.replace }, { closed = true })
sb:add_node("subnode_1", function(state)
  called[#called + 1] = "subnode_1"
  bar_values[#bar_values + 1] = state.bar == nil and sst.null or state.bar
  return { foo = "subgraph_1" }
end)
sb:add_node("subnode_2", function()
  called[#called + 1] = "subnode_2"
  local value = sst.interrupt("Provide value")
  value = value .. "baz"
  return { foo = "subgraph_2", bar = value }
end)
sb:add_edge(sst.START, "subnode_1")
sb:add_edge("subnode_1", "subnode_2")
local subgraph = sb:compile{ checkpointer = true }

local pb = sst.StateGraph({ foo = sst.reducers.replace, counter = sst.reducers.replace }, { closed = true })
pb:add_node("call_subgraph", function(state)
  called[#called + 1] = "call_subgraph"
  return subgraph:invoke(state)
end)
pb:add_node("node", function(state)
  called[#called + 1] = "parent"
  if state.counter < 1 then
    return sst.Command{ ["goto"] = "call_subgraph", update = { counter = state.counter + 1 } }
  end
  return { foo = state.foo .. "|" .. "parent" }
end, { ends = { "call_subgraph" } })
pb:add_edge(sst.START, "call_subgraph")
pb:add_edge("call_subgraph", "node")
local parent = pb:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

-- The result with its interrupts checked (ids) and replaced by their values.
local function run(input, what)
  local r = parent:invoke(input, config)
  if r.__interrupt__ then r.__interrupt__ = lg.interrupt_values(r.__interrupt__, what) end
  return r
end

T.eq(run({ foo = "", counter = 0 }, "1"), { foo = "", counter = 0, __interrupt__ = { "Provide value" } },
     "invoke 1")
T.eq(run(sst.Command{ resume = "bar" }, "2"),
     { foo = "subgraph_2", counter = 1, __interrupt__ = { "Provide value" } }, "resume bar")
T.eq(run(sst.Command{ resume = "qux" }, "3"), { foo = "subgraph_2|parent", counter = 1 }, "resume qux")
T.eq(called, {
  "call_subgraph", "subnode_1", "subnode_2", "call_subgraph", "subnode_2", "parent",
  "call_subgraph", "subnode_1", "subnode_2", "call_subgraph", "subnode_2", "parent",
}, "called")

-- invoke parent again (new turn)
T.eq(run({ foo = "meow", counter = 0 }, "4"), { foo = "meow", counter = 0, __interrupt__ = { "Provide value" } },
     "new turn")
-- confirm that we preserve the state values from the previous invocation
T.eq(bar_values, { sst.null, "barbaz", "quxbaz" }, "bar_values")
T.finish()
