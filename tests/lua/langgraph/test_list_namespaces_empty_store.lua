-- langgraph: libs/checkpoint/tests/test_store.py::test_list_namespaces_empty_store
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  T.eq(store:list_namespaces(), {}, name)
end)
T.finish()
