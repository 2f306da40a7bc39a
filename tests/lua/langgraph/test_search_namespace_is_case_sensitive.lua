-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_search_namespace_is_case_sensitive
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "Foo" }, "k", { v = "upper" })
  store:put({ "foo" }, "k", { v = "lower" })
  T.eq(S.ns_set(store:search({ "foo" }, { limit = 100 }), true), { "foo" }, name .. ": foo")
  T.eq(S.ns_set(store:search({ "Foo" }, { limit = 100 }), true), { "Foo" }, name .. ": Foo")
end)
T.finish()
