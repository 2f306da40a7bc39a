-- langgraph: libs/checkpoint/tests/test_store.py::test_vector_update_with_embedding
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_vector_update_with_embedding
-- Both tests' assertions, on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name)
  store:put({ "test" }, "doc1", { text = "zany zebra Xerxes" })
  store:put({ "test" }, "doc2", { text = "something about dogs" })
  store:put({ "test" }, "doc3", { text = "text about birds" })

  local results_initial = store:search({ "test" }, { query = "Zany Xerxes" })
  T.check(#results_initial > 0, name .. ": initial results")
  T.eq(results_initial[1].key, "doc1", name .. ": doc1 first")
  local initial_score = results_initial[1].score
  T.check(initial_score ~= nil, name .. ": initial score")

  store:put({ "test" }, "doc1", { text = "new text about dogs" })

  local results_after = store:search({ "test" }, { query = "Zany Xerxes" })
  local after = S.find(results_after, "doc1")
  local after_score = after and after.score or 0.0
  T.check(after_score ~= nil, name .. ": after score")
  T.check(after_score < initial_score, name .. ": score dropped")

  local results_new = store:search({ "test" }, { query = "new text about dogs" })
  for _, r in ipairs(results_new) do
    if r.key == "doc1" then
      T.check(r.score > after_score, name .. ": new score higher")
    end
  end

  -- Don't index this one
  store:put({ "test" }, "doc4", { text = "new text about dogs" }, { index = false })
  results_new = store:search({ "test" }, { query = "new text about dogs", limit = 3 })
  T.check(not S.has(S.keys(results_new), "doc4"), name .. ": doc4 not indexed")
end)
T.finish()
