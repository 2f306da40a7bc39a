-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_batch_put_ops
-- Run on InMemoryStore and SqliteStore (":memory:" and a file); a batch of
-- PutOps is the puts in order (superstep has no store.batch), and a PutOp
-- whose value is None is a delete.
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  -- three results, each None
  local r1 = store:put({ "test" }, "key1", { data = "value1" })
  local r2 = store:put({ "test" }, "key2", { data = "value2" })
  local r3 = store:delete({ "test" }, "key3") -- Delete operation
  T.check(r1 == nil and r2 == nil and r3 == nil, name .. ": all nil")

  local item1 = store:get({ "test" }, "key1")
  local item2 = store:get({ "test" }, "key2")
  local item3 = store:get({ "test" }, "key3")
  T.eq(item1 and item1.value, { data = "value1" }, name .. ": key1")
  T.eq(item2 and item2.value, { data = "value2" }, name .. ": key2")
  T.check(item3 == nil, name .. ": key3")
end)
T.finish()
