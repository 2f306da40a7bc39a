-- langgraph: test_pregel.py::test_entrypoint_stateful
-- Python's None for `previous` is sst.null in the returned table.
local sst = superstep
local T = require("checks")

local checkpointer = sst.MemorySaver()

-- Test invoke
local states = {}

local foo = sst.entrypoint{ name = "foo", checkpointer = checkpointer }(function(inputs, ctx)
  local previous = ctx.previous
  if previous == nil then previous = sst.null end
  states[#states + 1] = sst.to_table(previous)
  return { previous = previous, current = inputs }
end)

local config = { configurable = { thread_id = "1" } }

T.eq(foo:invoke({ a = "1" }, config), { current = { a = "1" }, previous = sst.null }, "invoke 1")
T.eq(foo:invoke({ a = "2" }, config), {
  current = { a = "2" },
  previous = { current = { a = "1" }, previous = sst.null },
}, "invoke 2")
T.eq(foo:invoke({ a = "3" }, config), {
  current = { a = "3" },
  previous = {
    current = { a = "2" },
    previous = { current = { a = "1" }, previous = sst.null },
  },
}, "invoke 3")
T.eq(states, {
  sst.null,
  { current = { a = "1" }, previous = sst.null },
  { current = { a = "2" }, previous = { current = { a = "1" }, previous = sst.null } },
}, "states")

-- Test stream
foo = sst.entrypoint{ name = "foo", checkpointer = checkpointer }(function(inputs, ctx)
  local previous = ctx.previous
  if previous == nil then previous = sst.null end
  return { previous = previous, current = inputs }
end)

config = { configurable = { thread_id = "2" } }
local items = {}
for item in foo:stream({ a = "1" }, config) do items[#items + 1] = item end
T.eq(items, { { foo = { current = { a = "1" }, previous = sst.null } } }, "stream")
T.finish()
