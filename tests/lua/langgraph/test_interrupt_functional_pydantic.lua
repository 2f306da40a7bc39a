-- langgraph: test_pydantic.py::test_interrupt_functional_pydantic
-- The pydantic model FunctionalState is a plain table; left out: the
-- isinstance(foo_res, FunctionalState) check (pydantic round-tripping).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local called_count = 0

local foo = sst.task("foo", function(state)
  called_count = called_count + 1
  return { a = state.a .. "foo" }
end)
local bar = sst.task("bar", function(state)
  return { a = state.a .. "bar", b = state.b }
end)

local graph = sst.entrypoint{ name = "graph", checkpointer = sst.MemorySaver() }(function(inputs)
  local fut_foo = foo(inputs)
  local value = sst.interrupt("Provide value for bar:")
  local foo_res = fut_foo:result()
  local bar_input = { a = foo_res.a, b = value }
  local fut_bar = bar(bar_input)
  return fut_bar:result()
end)

local config = lg.thread("1")
-- First run, interrupted at bar
local result = graph:invoke({ a = "" }, config)
local keys = {}
for k in pairs(result or {}) do keys[#keys + 1] = k end
T.eq(keys, { "__interrupt__" }, "first run returns only the interrupt")
T.eq(lg.interrupts(result and result.__interrupt__, "first run"),
     { lg.Interrupt("Provide value for bar:") }, "first run interrupts")
-- Resume with an answer
local res = graph:invoke(sst.Command{ resume = "bar" }, config)
T.eq(res, { a = "foobar", b = "bar" }, "resume")
T.eq(called_count, 1, "called_count")
T.finish()
