-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_batch_list_namespaces_ops
-- Run on InMemoryStore and SqliteStore (":memory:" and a file); a batch of
-- ListNamespacesOps is the listings in order (superstep has no store.batch);
-- MatchCondition("suffix", path) is suffix = path.
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local test_data = {
    { { "test", "documents", "public" }, "doc1", { content = "public doc" } },
    { { "test", "documents", "private" }, "doc2", { content = "private doc" } },
    { { "test", "images", "public" }, "img1", { content = "public image" } },
    { { "prod", "documents", "public" }, "doc3", { content = "prod doc" } },
  }
  for _, d in ipairs(test_data) do store:put(d[1], d[2], d[3]) end

  local results = {
    store:list_namespaces{ limit = 10, offset = 0 },
    store:list_namespaces{ max_depth = 2, limit = 10, offset = 0 },
    store:list_namespaces{ suffix = { "public" }, limit = 10, offset = 0 },
  }
  T.eq(#results, 3, name .. ": three results")
  T.eq(#results[1], #test_data, name .. ": all namespaces")
  for _, ns in ipairs(results[2]) do T.check(#ns <= 2, name .. ": depth 2") end
  for _, ns in ipairs(results[3]) do T.eq(ns[#ns], "public", name .. ": public suffix") end
end)
T.finish()
