-- langgraph: libs/checkpoint/tests/test_store.py::test_vector_search_pagination
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_vector_search_pagination
-- Both tests' assertions, on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name)
  for i = 0, 4 do
    store:put({ "test" }, "doc" .. i, { text = "test document number " .. i })
  end

  local results_page1 = store:search({ "test" }, { query = "test", limit = 2 })
  local results_page2 = store:search({ "test" }, { query = "test", limit = 2, offset = 2 })

  T.eq(#results_page1, 2, name .. ": page 1 size")
  T.eq(#results_page2, 2, name .. ": page 2 size")
  T.check(results_page1[1].key ~= results_page2[1].key, name .. ": pages differ 1/1")
  T.check(results_page1[2].key ~= results_page2[1].key, name .. ": pages differ 2/1")
  T.check(results_page1[1].key ~= results_page2[2].key, name .. ": pages differ 1/2")
  T.check(results_page1[2].key ~= results_page2[2].key, name .. ": pages differ 2/2")

  T.check(results_page1[1].score >= results_page1[2].score, name .. ": page 1 ordered")
  T.check(results_page2[1].score >= results_page2[2].score, name .. ": page 2 ordered")

  local all_results = store:search({ "test" }, { query = "test", limit = 10 })
  T.eq(#all_results, 5, name .. ": all")
  T.check(all_results[1].score >= all_results[3].score, name .. ": first page first")
end)
T.finish()
