-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_batch_search_ops
-- Run on InMemoryStore and SqliteStore (":memory:" and a file); a batch of
-- SearchOps is the searches in order (superstep has no store.batch).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local test_data = {
    { { "test", "foo" }, "key1", { data = "value1", tag = "a" } },
    { { "test", "bar" }, "key2", { data = "value2", tag = "a" } },
    { { "test", "baz" }, "key3", { data = "value3", tag = "b" } },
  }
  for _, d in ipairs(test_data) do store:put(d[1], d[2], d[3]) end

  local results = {
    store:search({ "test" }, { filter = { tag = "a" }, limit = 10, offset = 0 }),
    store:search({ "test" }, { limit = 2, offset = 0 }),
    store:search({ "test", "foo" }, { limit = 10, offset = 0 }),
  }
  T.eq(#results, 3, name .. ": three results")
  T.eq(#results[1], 2, name .. ": tag a")
  for _, item in ipairs(results[1]) do T.eq(item.value.tag, "a", name .. ": tag") end
  T.eq(#results[2], 2, name .. ": first 2")
  T.eq(#results[3], 1, name .. ": test/foo")
  T.eq(results[3][1].namespace, { "test", "foo" }, name .. ": test/foo namespace")
end)
T.finish()
