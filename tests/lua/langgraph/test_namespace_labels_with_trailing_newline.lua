-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_namespace_labels_with_trailing_newline
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "users", "alice" }, "k", { v = 1 })
  store:put({ "users", "alice\n" }, "k", { v = 2 })
  T.eq(store:list_namespaces{ suffix = { "alice" }, limit = 100 }, { { "users", "alice" } },
       name .. ": suffix")
  T.eq(store:list_namespaces{ prefix = { "users", "alice" }, limit = 100 }, { { "users", "alice" } },
       name .. ": prefix")
end)
T.finish()
