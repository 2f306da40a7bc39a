-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_embed_with_path_operation_config
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts{ "key17" }, function(store, name)
  local doc3 = { key0 = "aaa", key1 = "bbb", key2 = "ccc", key3 = "ddd" }
  local doc4 = {
    key0 = "eee",
    key1 = "bbb", -- Same as doc3.key1
    key2 = "fff",
    key3 = "ggg",
  }
  store:put({ "test" }, "doc3", doc3, { index = { "key0", "key1" } })
  store:put({ "test" }, "doc4", doc4, { index = { "key1", "key3" } })

  local results = store:search({ "test" }, { query = "aaa" })
  T.eq(#results, 2, name .. ": aaa count")
  T.eq(results[1].key, "doc3", name .. ": aaa doc3")
  T.check(results[1].key ~= results[2].key, name .. ": aaa keys")
  T.check(results[1].score > results[2].score, name .. ": aaa order")

  results = store:search({ "test" }, { query = "ggg" })
  T.eq(#results, 2, name .. ": ggg count")
  T.eq(results[1].key, "doc4", name .. ": ggg doc4")
  T.check(results[1].score > results[2].score, name .. ": ggg order")

  results = store:search({ "test" }, { query = "bbb" })
  T.eq(#results, 2, name .. ": bbb count")
  T.check(results[1].key ~= results[2].key, name .. ": bbb keys")
  T.check(math.abs(results[1].score - results[2].score) < 0.1, name .. ": bbb similar scores")

  results = store:search({ "test" }, { query = "ccc" })
  T.eq(#results, 2, name .. ": ccc count")
  T.check(results[1].score < 0.9 and results[2].score < 0.9, name .. ": ccc low")

  -- Test index=False behavior
  store:put({ "test" }, "doc5", { key0 = "hhh", key1 = "iii" }, { index = false })
  results = store:search({ "test" })
  T.eq(#results, 3, name .. ": all three")
  T.check(S.has(S.keys(results), "doc5"), name .. ": doc5 listed")
end)
T.finish()
