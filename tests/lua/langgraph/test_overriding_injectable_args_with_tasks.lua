-- langgraph: test_pregel.py::test_overriding_injectable_args_with_tasks
-- Python injects `store` and `writer` into a task by parameter name unless
-- the caller passes them; a Lua task gets its arguments as given (the
-- entrypoint's store is ctx.store), so the port checks that arguments in
-- those positions arrive exactly as passed, nil or "hello".
local sst = superstep
local T = require("checks")

local foo = sst.task("foo", function(store, writer, value)
  T.check(store == value, "store is value: " .. tostring(store) .. " vs " .. tostring(value))
  T.check(writer == value, "writer is value: " .. tostring(writer) .. " vs " .. tostring(value))
end)

local main = sst.entrypoint{ name = "main", store = sst.InMemoryStore() }(function(inputs, ctx)
  T.check(ctx.store ~= nil, "store is not None")
  foo(nil, nil, nil):result()
  foo("hello", "hello", "hello"):result()
  return "OK"
end)

T.eq(main:invoke({}), "OK", "invoke")
T.finish()
