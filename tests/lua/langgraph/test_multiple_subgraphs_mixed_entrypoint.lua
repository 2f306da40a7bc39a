-- langgraph: test_pregel.py::test_multiple_subgraphs_mixed_entrypoint
-- Test calling multiple StateGraph subgraphs from an entrypoint.
-- StateGraph(State, output_schema=Output) declares the fields of both
-- (a, b, result) with output_schema = { "result" }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local checkpointer = sst.MemorySaver()

local function State()
  return sst.StateGraph({ a = sst.reducers.replace, b = sst.reducers.replace, result = sst.reducers.replace },
                        { output_schema = { "result" } })
end

-- Define the subgraphs
local add_builder = State()
add_builder:add_node("add", function(state) return { result = state.a + state.b } end)
add_builder:add_edge(sst.START, "add")
local add_subgraph = add_builder:compile()

local multiply_builder = State()
multiply_builder:add_node("multiply", function(state) return { result = state.a * state.b } end)
multiply_builder:add_edge(sst.START, "multiply")
local multiply_subgraph = multiply_builder:compile()

-- Test calling the same subgraph multiple times
local call_same_subgraph = sst.task("call_same_subgraph", function(a, b)
  local result = add_subgraph:invoke({ a = a, b = b }).result
  local another_result = add_subgraph:invoke({ a = result, b = 10 }).result
  return another_result
end)

local parent_call_same_subgraph = sst.entrypoint{ name = "parent_call_same_subgraph",
                                                  checkpointer = checkpointer }(function(inputs)
  return call_same_subgraph(inputs[1], inputs[2]):result()
end)

local config = lg.thread("1")
T.eq(parent_call_same_subgraph:invoke({ 2, 3 }, config), 15, "same subgraph twice")

-- Test calling multiple subgraphs
local call_multiple_subgraphs = sst.task("call_multiple_subgraphs", function(a, b)
  local add_result = add_subgraph:invoke({ a = a, b = b }).result
  local multiply_result = multiply_subgraph:invoke({ a = a, b = b }).result
  return { add_result, multiply_result }
end)

local parent_call_multiple_subgraphs = sst.entrypoint{ name = "parent_call_multiple_subgraphs",
                                                       checkpointer = checkpointer }(function(inputs)
  return call_multiple_subgraphs(inputs[1], inputs[2]):result()
end)

config = lg.thread("2")
T.eq(parent_call_multiple_subgraphs:invoke({ 2, 3 }, config), { 5, 6 }, "two subgraphs")
T.finish()
