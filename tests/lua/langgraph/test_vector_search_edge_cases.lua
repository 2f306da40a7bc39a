-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_edge_cases
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name)
  store:put({ "test" }, "doc1", { text = "test document" })

  T.eq(#store:search({ "test" }, { query = "" }), 1, name .. ": empty query")
  T.eq(#store:search({ "test" }, { query = nil }), 1, name .. ": no query")
  T.eq(#store:search({ "test" }, { query = string.rep("test ", 100) }), 1, name .. ": long query")
  T.eq(#store:search({ "test" }, { query = "test!@#$%^&*()" }), 1, name .. ": special query")
end)
T.finish()
