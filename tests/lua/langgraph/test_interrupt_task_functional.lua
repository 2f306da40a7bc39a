-- langgraph: test_pregel.py::test_interrupt_task_functional
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function only_interrupt(result, value, what)
  local keys = {}
  for k in pairs(result or {}) do keys[#keys + 1] = k end
  T.eq(keys, { "__interrupt__" }, what .. ": returns only the interrupt")
  T.eq(lg.interrupts(result and result.__interrupt__, what), { lg.Interrupt(value) }, what)
end

local checkpointer = sst.MemorySaver()

local foo = sst.task("foo", function(state)
  return { a = state.a .. "foo" }
end)
local bar = sst.task("bar", function(state)
  local value = sst.interrupt("Provide value for bar:")
  return { a = state.a .. value }
end)

local graph = sst.entrypoint{ name = "graph", checkpointer = checkpointer }(function(inputs)
  local fut_foo = foo(inputs)
  local fut_bar = bar(fut_foo:result())
  return fut_bar:result()
end)

local config = lg.thread("1")
-- First run, interrupted at bar
only_interrupt(graph:invoke({ a = "" }, config), "Provide value for bar:", "first run")
-- Resume with an answer
local res = graph:invoke(sst.Command{ resume = "bar" }, config)
T.eq(res, { a = "foobar" }, "resume")

-- Test that we can interrupt the same task multiple times
config = lg.thread("2")

graph = sst.entrypoint{ name = "graph", checkpointer = checkpointer }(function(inputs)
  local foo_result = foo(inputs):result()
  local bar_result = bar(foo_result):result()
  local baz_result = bar(bar_result):result()
  return baz_result
end)

-- First run, interrupted at bar
only_interrupt(graph:invoke({ a = "" }, config), "Provide value for bar:", "thread 2 first run")
-- Provide resumes
graph:invoke(sst.Command{ resume = "bar" }, config)
T.eq(graph:invoke(sst.Command{ resume = "baz" }, config), { a = "foobarbaz" }, "thread 2 result")
T.finish()
