-- langgraph: test_large_cases.py::test_subgraph_to_end_does_not_warn
-- Regression test for langgraph issue 5572 (a Python warning when a
-- subgraph's Command goes to END); the port asserts the result as Python does.
local sst = superstep
local T = require("checks")

local function update_x(state)
  return sst.Command{ ["goto"] = sst.END, update = { x = state.x .. "!" } }
end

-- Subgraph
local subgraph_builder = sst.StateGraph{ x = sst.reducers.replace }
subgraph_builder:add_node("update_x", update_x)
subgraph_builder:add_edge(sst.START, "update_x")
subgraph_builder:add_edge("update_x", sst.END)
local subgraph = subgraph_builder:compile()

-- Parent graph
local builder = sst.StateGraph{ x = sst.reducers.replace }
builder:add_node("subgraph_node", subgraph)
builder:add_edge(sst.START, "subgraph_node")
builder:add_edge("subgraph_node", sst.END)
local graph = builder:compile()

local response = graph:invoke({ x = "hello" })
T.eq(response, { x = "hello!" }, "invoke")
T.finish()
