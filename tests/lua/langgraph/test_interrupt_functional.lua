-- langgraph: test_pregel.py::test_interrupt_functional
local sst = superstep
local T = require("checks")
local lg = require("lg")

local foo = sst.task("foo", function(state)
  return { a = state.a .. "foo" }
end)
local bar = sst.task("bar", function(state)
  return { a = state.a .. "bar", b = state.b }
end)

local graph = sst.entrypoint{ name = "graph", checkpointer = sst.MemorySaver() }(function(inputs)
  local fut_foo = foo(inputs)
  local value = sst.interrupt("Provide value for bar:")
  local bar_input = sst.to_table(fut_foo:result())
  bar_input.b = value
  local fut_bar = bar(bar_input)
  return fut_bar:result()
end)

local config = lg.thread("1")
-- First run, interrupted at bar
local result = graph:invoke({ a = "" }, config)
T.eq(lg.interrupts(result.__interrupt__, "first run"), { lg.Interrupt("Provide value for bar:") },
     "first run interrupts")
local keys = {}
for k in pairs(result) do keys[#keys + 1] = k end
T.eq(keys, { "__interrupt__" }, "first run returns only the interrupt")
-- Resume with an answer
local res = graph:invoke(sst.Command{ resume = "bar" }, config)
T.eq(res, { a = "foobar", b = "bar" }, "resume")
T.finish()
