-- langgraph: test_pregel.py::test_entrypoint_stateful_update_state
-- Python's None for `previous` is sst.null in the returned table.
local sst = superstep
local T = require("checks")

-- Test invoke
local states = {}

local foo = sst.entrypoint{ name = "foo", checkpointer = sst.MemorySaver() }(function(inputs, ctx)
  local previous = ctx.previous
  if previous == nil then previous = sst.null end
  states[#states + 1] = sst.to_table(previous)
  return { previous = previous, current = inputs }
end)

local config = { configurable = { thread_id = "1" } }

foo:update_state(config, { a = "-1" })
T.eq(foo:invoke({ a = "1" }, config), {
  current = { a = "1" },
  previous = { a = "-1" },
}, "invoke 1")
T.eq(foo:invoke({ a = "2" }, config), {
  current = { a = "2" },
  previous = { current = { a = "1" }, previous = { a = "-1" } },
}, "invoke 2")
T.eq(foo:invoke({ a = "3" }, config), {
  current = { a = "3" },
  previous = {
    current = { a = "2" },
    previous = { current = { a = "1" }, previous = { a = "-1" } },
  },
}, "invoke 3")

-- update state
foo:update_state(config, { a = "3" })

-- Test stream
local items = {}
for item in foo:stream({ a = "1" }, config) do items[#items + 1] = item end
T.eq(items, { { foo = { current = { a = "1" }, previous = { a = "3" } } } }, "stream")
T.eq(states, {
  { a = "-1" },
  { current = { a = "1" }, previous = { a = "-1" } },
  {
    current = { a = "2" },
    previous = { current = { a = "1" }, previous = { a = "-1" } },
  },
  { a = "3" },
}, "states")
T.finish()
