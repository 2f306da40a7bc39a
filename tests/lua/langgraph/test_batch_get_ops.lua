-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_batch_get_ops
-- Run on InMemoryStore and SqliteStore (":memory:" and a file); a batch of
-- GetOps is the gets in order (superstep has no store.batch).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "test" }, "key1", { data = "value1" })
  store:put({ "test" }, "key2", { data = "value2" })
  local results = {
    store:get({ "test" }, "key1"),
    store:get({ "test" }, "key2"),
    store:get({ "test" }, "key3"), -- Non-existent key
  }
  T.check(results[1] ~= nil, name .. ": key1")
  T.check(results[2] ~= nil, name .. ": key2")
  T.check(results[3] == nil, name .. ": key3")
  T.eq(results[1].key, "key1", name .. ": key1 key")
  T.eq(results[2].key, "key2", name .. ": key2 key")
end)
T.finish()
