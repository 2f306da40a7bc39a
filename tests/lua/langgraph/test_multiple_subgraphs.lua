-- langgraph: test_pregel.py::test_multiple_subgraphs
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function State(output)
  return sst.StateGraph({ a = sst.reducers.replace, b = sst.reducers.replace }, { output_schema = output })
end

local ab = State({ "result" })
ab:add_node("add", function(state) return { result = state.a + state.b } end)
ab:add_edge(sst.START, "add")
local add_subgraph = ab:compile()

local mb = State({ "result" })
mb:add_node("multiply", function(state) return { result = state.a * state.b } end)
mb:add_edge(sst.START, "multiply")
local multiply_subgraph = mb:compile()

local saver = sst.MemorySaver()

-- calling the same subgraph multiple times
local p1 = State({ "result" })
p1:add_node("call_same_subgraph", function(state)
  local result = add_subgraph:invoke(state)
  return add_subgraph:invoke({ a = result.result, b = 10 })
end)
p1:add_edge(sst.START, "call_same_subgraph")
local parent_call_same_subgraph = p1:compile{ checkpointer = saver }
T.eq(parent_call_same_subgraph:invoke({ a = 2, b = 3 }, lg.thread("1")), { result = 15 }, "same subgraph")

-- calling multiple subgraphs
local p2 = State({ "add_result", "multiply_result" })
p2:add_node("call_multiple_subgraphs", function(state)
  local add_result = add_subgraph:invoke(state)
  local multiply_result = multiply_subgraph:invoke(state)
  return { add_result = add_result.result, multiply_result = multiply_result.result }
end)
p2:add_edge(sst.START, "call_multiple_subgraphs")
local parent_call_multiple_subgraphs = p2:compile{ checkpointer = saver }
T.eq(parent_call_multiple_subgraphs:invoke({ a = 2, b = 3 }, lg.thread("2")),
     { add_result = 5, multiply_result = 6 }, "multiple subgraphs")
T.finish()
