-- langgraph: test_pregel.py::test_multiple_subgraphs_mixed_state_graph
-- Test calling multiple entrypoint "subgraphs" from a StateGraph.
-- StateGraph(State, output_schema=Output) declares the fields of both with
-- output_schema = Output's fields.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local checkpointer = sst.MemorySaver()

-- Define addition subgraph
local add = sst.entrypoint{ name = "add" }(function(inputs)
  local a, b = inputs[1], inputs[2]
  return a + b
end)

-- Define multiplication subgraph using tasks
local multiply_task = sst.task("multiply_task", function(a, b)
  return a * b
end)

local multiply = sst.entrypoint{ name = "multiply" }(function(inputs)
  return multiply_task(inputs[1], inputs[2]):result()
end)

-- Test calling the same subgraph multiple times
local function call_same_subgraph(state)
  local result = add:invoke({ state.a, state.b })
  local another_result = add:invoke({ result, 10 })
  return { result = another_result }
end

local builder = sst.StateGraph({ a = sst.reducers.replace, b = sst.reducers.replace, result = sst.reducers.replace },
                               { output_schema = { "result" } })
builder:add_node("call_same_subgraph", call_same_subgraph)
builder:add_edge(sst.START, "call_same_subgraph")
local parent_call_same_subgraph = builder:compile{ checkpointer = checkpointer }
local config = lg.thread("1")
T.eq(parent_call_same_subgraph:invoke({ a = 2, b = 3 }, config), { result = 15 }, "same subgraph twice")

-- Test calling multiple subgraphs
local function call_multiple_subgraphs(state)
  local add_result = add:invoke({ state.a, state.b })
  local multiply_result = multiply:invoke({ state.a, state.b })
  return {
    add_result = add_result,
    multiply_result = multiply_result,
  }
end

builder = sst.StateGraph({
  a = sst.reducers.replace,
  b = sst.reducers.replace,
  add_result = sst.reducers.replace,
  multiply_result = sst.reducers.replace,
}, { output_schema = { "add_result", "multiply_result" } })
builder:add_node("call_multiple_subgraphs", call_multiple_subgraphs)
builder:add_edge(sst.START, "call_multiple_subgraphs")
local parent_call_multiple_subgraphs = builder:compile{ checkpointer = checkpointer }
config = lg.thread("2")
T.eq(parent_call_multiple_subgraphs:invoke({ a = 2, b = 3 }, config), {
  add_result = 5,
  multiply_result = 6,
}, "two subgraphs")
T.finish()
