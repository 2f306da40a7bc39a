-- langgraph: test_pregel.py::test_multiple_interrupts_functional
local sst = superstep
local T = require("checks")
local lg = require("lg")

local counter = 0

local double = sst.task("double", function(x)
  -- Increment the counter.
  counter = counter + 1
  return 2 * x
end)

local graph = sst.entrypoint{ name = "graph", checkpointer = sst.MemorySaver() }(function(state)
  local values = {}
  for _, idx in ipairs{ 1, 2, 3 } do
    values[#values + 1] = double(idx):result()
    values[#values + 1] = sst.interrupt({ a = "boo" })
  end
  return { values = values }
end)

local configurable = lg.thread("0b6d3c52-8f0e-4c55-9d0c-2a9d6f3e7b10")
graph:invoke({}, configurable)
graph:invoke(sst.Command{ resume = "a" }, configurable)
graph:invoke(sst.Command{ resume = "b" }, configurable)
local result = graph:invoke(sst.Command{ resume = "c" }, configurable)
-- `double` value should be cached appropriately when used w/ `interrupt`
T.eq(result, { values = { 2, "a", 4, "b", 6, "c" } }, "result")
T.eq(counter, 3, "counter")
T.finish()
