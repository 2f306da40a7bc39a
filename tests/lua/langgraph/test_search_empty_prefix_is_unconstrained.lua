-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_search_empty_prefix_is_unconstrained
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  for _, ns in ipairs{ { "a" }, { "b", "c" }, { "d", "e", "f" } } do store:put(ns, "k", { v = 1 }) end
  T.eq(S.ns_set(store:search({}, { limit = 100 }), true), { "a", "b.c", "d.e.f" }, name)
end)
T.finish()
