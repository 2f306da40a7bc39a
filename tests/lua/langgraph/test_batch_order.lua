-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_batch_order
-- Run on InMemoryStore and SqliteStore (":memory:" and a file). superstep
-- has no store.batch: a batch of ops is its calls in order (GetOp is get,
-- PutOp put, SearchOp search, ListNamespacesOp list_namespaces), each
-- result in its place (a put's is nil).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "test", "foo" }, "key1", { data = "value1" })
  store:put({ "test", "bar" }, "key2", { data = "value2" })

  local results = {
    store:get({ "test", "foo" }, "key1"),
    store:put({ "test", "bar" }, "key2", { data = "value2" }),
    store:search({ "test" }, { filter = { data = "value1" }, limit = 10, offset = 0 }),
    store:list_namespaces{ limit = 10, offset = 0 },
    store:get({ "test" }, "key3"),
  }
  T.eq(#results[3], 1, name .. ": one search result")
  T.check(type(results[1]) == "table" and type(results[1].value) == "table", name .. ": item")
  T.eq(results[1].value, { data = "value1" }, name .. ": get value")
  T.eq(results[1].key, "key1", name .. ": get key")
  T.eq(results[1].namespace, { "test", "foo" }, name .. ": get namespace")
  T.check(results[2] == nil, name .. ": put returns nothing")
  T.eq(results[3][1].key, "key1", name .. ": search key")
  T.eq(results[3][1].value, { data = "value1" }, name .. ": search value")
  T.check(#results[4] > 0, name .. ": namespaces")
  local listed = S.ns_set(results[4])
  T.check(S.has(listed, "test.foo"), name .. ": test/foo listed")
  T.check(S.has(listed, "test.bar"), name .. ": test/bar listed")
  T.check(results[5] == nil, name .. ": missing key")

  -- Test reordered operations
  local reordered = {
    store:search({ "test" }, { limit = 5, offset = 0 }),
    store:get({ "test", "bar" }, "key2"),
    store:list_namespaces{ limit = 5, offset = 0 },
    store:put({ "test" }, "key3", { data = "value3" }),
    store:get({ "test", "foo" }, "key1"),
  }
  T.check(#reordered[1] >= 2, name .. ": reordered search")
  T.eq(reordered[2].value, { data = "value2" }, name .. ": reordered get value")
  T.eq(reordered[2].key, "key2", name .. ": reordered get key")
  T.eq(reordered[2].namespace, { "test", "bar" }, name .. ": reordered get namespace")
  T.check(#reordered[3] > 0, name .. ": reordered namespaces")
  T.check(reordered[4] == nil, name .. ": reordered put")
  T.eq(reordered[5].value, { data = "value1" }, name .. ": reordered get 2 value")
  T.eq(reordered[5].key, "key1", name .. ": reordered get 2 key")
  T.eq(reordered[5].namespace, { "test", "foo" }, name .. ": reordered get 2 namespace")

  -- Verify the put worked
  local item3 = store:get({ "test" }, "key3")
  T.check(item3 ~= nil, name .. ": key3")
  T.eq(item3 and item3.value, { data = "value3" }, name .. ": key3 value")
end)
T.finish()
