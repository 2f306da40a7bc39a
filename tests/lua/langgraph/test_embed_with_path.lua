-- langgraph: libs/checkpoint/tests/test_store.py::test_embed_with_path
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_embed_with_path
-- Both tests' assertions (the first is async: aput, asearch are put, search),
-- on InMemoryStore and SqliteStore (":memory:" and a file). The store
-- without default fields shares the first store's embeddings, as the
-- Python test's two stores share one fixture.
local T = require("checks")
local S = require("lg_store")

local function approx(a, b, tol) return a ~= nil and b ~= nil and math.abs(a - b) <= tol end

S.each_store(S.vector_opts{ "key0", "key1", "key3" }, function(store, name, opts, make)
  local fake_embeddings = opts.index.embed
  -- This will have 2 vectors representing it
  local doc1 = {
    -- Omit key0 - check it doesn't raise an error
    key1 = "xxx",
    key2 = "yyy",
    key3 = "zzz",
  }
  -- This will have 3 vectors representing it
  local doc2 = { key0 = "uuu", key1 = "vvv", key2 = "www", key3 = "xxx" }
  store:put({ "test" }, "doc1", doc1)
  store:put({ "test" }, "doc2", doc2)

  -- doc2.key3 and doc1.key1 both would have the highest score
  local results = store:search({ "test" }, { query = "xxx" })
  T.eq(#results, 2, name .. ": xxx count")
  T.check(results[1].key ~= results[2].key, name .. ": xxx keys")
  local ascore, bscore = results[1].score, results[2].score
  T.check(ascore ~= nil and bscore ~= nil, name .. ": xxx scored")
  T.check(approx(ascore, bscore, 1e-5), name .. ": xxx scores equal")
  T.check(ascore > 0.9 and bscore > 0.9, name .. ": xxx scores > 0.9")

  results = store:search({ "test" }, { query = "uuu" })
  T.eq(#results, 2, name .. ": uuu count")
  T.check(results[1].key ~= results[2].key, name .. ": uuu keys")
  T.eq(results[1].key, "doc2", name .. ": uuu doc2")
  T.check(results[1].score ~= nil and results[1].score > results[2].score, name .. ": uuu order")
  T.check(approx(ascore, results[1].score, 1e-5), name .. ": uuu exact match")

  -- ~Only match doc1
  results = store:search({ "test" }, { query = "zzz" })
  T.eq(#results, 2, name .. ": zzz count")
  T.check(results[1].key ~= results[2].key, name .. ": zzz keys")
  T.eq(results[1].key, "doc1", name .. ": zzz doc1")
  T.check(results[1].score > results[2].score, name .. ": zzz order")

  -- Un-indexed - will have low results for both. Not zero (because we're projecting)
  -- but less than the above.
  results = store:search({ "test" }, { query = "www" })
  T.eq(#results, 2, name .. ": www count")
  T.check(results[1].key ~= results[2].key, name .. ": www keys")
  T.check(results[1].score < ascore and results[2].score < ascore, name .. ": www low")
  T.check(results[1].score < 0.9 and results[2].score < 0.9, name .. ": www < 0.9")

  -- Test operation-level field configuration
  local store_no_defaults = make{ index = { dims = fake_embeddings.dims, embed = fake_embeddings,
                                            fields = { "key17" } } }
  local doc3 = { key0 = "aaa", key1 = "bbb", key2 = "ccc", key3 = "ddd" }
  local doc4 = {
    key0 = "eee",
    key1 = "bbb", -- Same as doc3.key1
    key2 = "fff",
    key3 = "ggg",
  }
  store_no_defaults:put({ "test" }, "doc3", doc3, { index = { "key0", "key1" } })
  store_no_defaults:put({ "test" }, "doc4", doc4, { index = { "key1", "key3" } })

  results = store_no_defaults:search({ "test" }, { query = "aaa" })
  T.eq(#results, 2, name .. ": aaa count")
  T.eq(results[1].key, "doc3", name .. ": aaa doc3")
  T.check(results[1].score ~= nil and results[1].score > results[2].score, name .. ": aaa order")

  results = store_no_defaults:search({ "test" }, { query = "ggg" })
  T.eq(#results, 2, name .. ": ggg count")
  T.eq(results[1].key, "doc4", name .. ": ggg doc4")
  T.check(results[1].score ~= nil and results[1].score > results[2].score, name .. ": ggg order")

  results = store_no_defaults:search({ "test" }, { query = "bbb" })
  T.eq(#results, 2, name .. ": bbb count")
  T.check(results[1].key ~= results[2].key, name .. ": bbb keys")
  T.eq(results[1].score, results[2].score, name .. ": bbb equal scores")

  results = store_no_defaults:search({ "test" }, { query = "ccc" })
  T.eq(#results, 2, name .. ": ccc count")
  T.check(results[1].score < ascore and results[2].score < ascore, name .. ": ccc low")

  local doc5 = { key0 = "hhh", key1 = "iii" }
  store_no_defaults:put({ "test" }, "doc5", doc5, { index = false })

  results = store_no_defaults:search({ "test" }, { query = "hhh" })
  T.eq(#results, 3, name .. ": hhh count")
  local doc5_result = S.find(results, "doc5")
  T.check(doc5_result ~= nil and doc5_result.score == nil, name .. ": doc5 has no score")
end)
T.finish()
