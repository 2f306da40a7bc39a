-- langgraph: test_pregel.py::test_entrypoint_without_checkpointer
-- Python's None for `previous` is sst.null in the returned table.
local sst = superstep
local T = require("checks")

local states = {}
local config = { configurable = { thread_id = "1" } }

-- Test without previous
local foo = sst.entrypoint{ name = "foo" }(function(inputs)
  states[#states + 1] = sst.to_table(inputs)
  return inputs
end)

T.eq(foo:invoke({ a = "1" }, config), { a = "1" }, "without previous")

foo = sst.entrypoint{ name = "foo" }(function(inputs, ctx)
  local previous = ctx.previous
  if previous == nil then previous = sst.null end
  states[#states + 1] = sst.to_table(previous)
  return { previous = previous, current = inputs }
end)

T.eq(foo:invoke({ a = "1" }, config), { current = { a = "1" }, previous = sst.null }, "first invoke")
T.eq(foo:invoke({ a = "1" }, config), { current = { a = "1" }, previous = sst.null }, "second invoke")
T.finish()
