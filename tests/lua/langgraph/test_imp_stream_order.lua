-- langgraph: test_pregel.py::test_imp_stream_order
-- The durability parameter is a loop (a new checkpointer each time). foo's
-- tuple is a Lua list, spread into bar's arguments with table.unpack.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs{ "sync", "async", "exit" } do
  local what = "durability " .. durability .. ": "

  local foo = sst.task(function(state)
    return { state.a .. "foo", "bar" }
  end)
  local bar = sst.task(function(a, b, c)
    return { a = a .. b, c = (c or "") .. "bark" }
  end)
  local baz = sst.task(function(state)
    return { a = state.a .. "baz", c = "something else" }
  end)

  local graph = sst.entrypoint{ checkpointer = sst.MemorySaver() }(function(state)
    local fut_foo = foo(state)
    local fut_bar = bar(table.unpack(sst.to_table(fut_foo:result())))
    local fut_baz = baz(fut_bar:result())
    return fut_baz:result()
  end)

  local thread1 = lg.thread("1")
  T.eq(lg.collect(graph:stream({ a = "0" }, thread1, { durability = durability })), {
    { foo = { "0foo", "bar" } },
    { bar = { a = "0foobar", c = "bark" } },
    { baz = { a = "0foobarbaz", c = "something else" } },
    { graph = { a = "0foobarbaz", c = "something else" } },
  }, what .. "stream")

  T.eq(graph:get_state(thread1).values, { a = "0foobarbaz", c = "something else" },
       what .. "get_state values")
end
T.finish()
