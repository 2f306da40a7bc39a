-- langgraph: test_pregel.py::test_multiple_subgraphs_functional
-- Entrypoint apps invoked inside a task without a config run as subgraphs.
-- The tuple inputs are Lua lists; multiply_task(*inputs) spreads them.
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
local call_same_subgraph = sst.task("call_same_subgraph", function(a, b)
  local result = add:invoke({ a, b })
  local another_result = add:invoke({ result, 10 })
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
  local add_result = add:invoke({ a, b })
  local multiply_result = multiply:invoke({ a, b })
  return { add_result, multiply_result }
end)

local parent_call_multiple_subgraphs = sst.entrypoint{ name = "parent_call_multiple_subgraphs",
                                                       checkpointer = checkpointer }(function(inputs)
  return call_multiple_subgraphs(inputs[1], inputs[2]):result()
end)

config = lg.thread("2")
T.eq(parent_call_multiple_subgraphs:invoke({ 2, 3 }, config), { 5, 6 }, "two subgraphs")
T.finish()
