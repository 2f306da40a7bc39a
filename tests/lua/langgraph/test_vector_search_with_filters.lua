-- langgraph: libs/checkpoint/tests/test_store.py::test_vector_search_with_filters
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_with_filters
-- Both tests' assertions, on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name)
  local docs = {
    { "doc1", { text = "red apple", color = "red", score = 4.5 } },
    { "doc2", { text = "red car", color = "red", score = 3.0 } },
    { "doc3", { text = "green apple", color = "green", score = 4.0 } },
    { "doc4", { text = "blue car", color = "blue", score = 3.5 } },
  }
  for _, d in ipairs(docs) do store:put({ "test" }, d[1], d[2]) end

  local results = store:search({ "test" }, { query = "apple", filter = { color = "red" } })
  T.eq(#results, 2, name .. ": red apple count")
  T.eq(results[1].key, "doc1", name .. ": red apple first")

  results = store:search({ "test" }, { query = "car", filter = { color = "red" } })
  T.eq(#results, 2, name .. ": red car count")
  T.eq(results[1].key, "doc2", name .. ": red car first")

  results = store:search({ "test" }, { query = "bbbbluuu", filter = { score = { ["$gt"] = 3.2 } } })
  T.eq(#results, 3, name .. ": score > 3.2 count")
  T.eq(results[1].key, "doc4", name .. ": blue car first")
  local high_score_keys = S.keys(results)
  T.check(S.has(high_score_keys, "doc1"), name .. ": doc1 (4.5)")
  T.check(S.has(high_score_keys, "doc3"), name .. ": doc3 (4.0)")

  -- Multiple filters
  results = store:search({ "test" }, { query = "apple",
                                       filter = { score = { ["$gte"] = 4.0 }, color = "green" } })
  T.eq(#results, 1, name .. ": two filters count")
  T.eq(results[1].key, "doc3", name .. ": green apple")
end)
T.finish()
