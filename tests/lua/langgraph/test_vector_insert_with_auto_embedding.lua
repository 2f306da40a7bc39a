-- langgraph: libs/checkpoint/tests/test_store.py::test_vector_insert_with_auto_embedding
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_vector_insert_with_auto_embedding
-- The same test in both files, on InMemoryStore and SqliteStore (":memory:"
-- and a file, the conn_type parameters; distance_type is only "cosine").
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name)
  local docs = {
    { "doc1", { text = "short text" } },
    { "doc2", { text = "longer text document" } },
    { "doc3", { text = "longest text document here" } },
    { "doc4", { description = "text in description field" } },
    { "doc5", { content = "text in content field" } },
    { "doc6", { body = "text in body field" } },
  }
  for _, d in ipairs(docs) do store:put({ "test" }, d[1], d[2]) end

  local results = store:search({ "test" }, { query = "long text" })
  T.check(#results > 0, name .. ": results")
  local doc_order = S.keys(results)
  T.check(S.has(doc_order, "doc2"), name .. ": doc2")
  T.check(S.has(doc_order, "doc3"), name .. ": doc3")
end)
T.finish()
