-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_search_namespace_wildcard_chars_are_literal
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  for _, ns in ipairs{ { "user_1" }, { "user_1", "child" }, { "userX1" }, { "a%b" }, { "axxb" },
                       { "star*" }, { "starX" } } do
    store:put(ns, "k", { v = 1 })
  end
  local function namespaces(prefix) return S.ns_set(store:search(prefix, { limit = 100 }), true) end
  T.eq(namespaces{ "user_1" }, { "user_1", "user_1.child" }, name .. ": user_1")
  T.eq(namespaces{ "a%b" }, { "a%b" }, name .. ": a%b")
  T.eq(namespaces{ "star*" }, { "star*" }, name .. ": star*")
end)
T.finish()
