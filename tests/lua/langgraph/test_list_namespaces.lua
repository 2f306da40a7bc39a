-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_list_namespaces
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local test_namespaces = {
    { "test", "documents", "public" },
    { "test", "documents", "private" },
    { "test", "images", "public" },
    { "test", "images", "private" },
    { "prod", "documents", "public" },
    { "prod", "documents", "private" },
  }
  for _, ns in ipairs(test_namespaces) do store:put(ns, "dummy", { content = "dummy" }) end

  T.eq(#store:list_namespaces(), #test_namespaces, name .. ": all")

  local test_prefix_namespaces = store:list_namespaces{ prefix = { "test" } }
  T.eq(#test_prefix_namespaces, 4, name .. ": prefix count")
  for _, ns in ipairs(test_prefix_namespaces) do T.eq(ns[1], "test", name .. ": prefix") end

  local public_namespaces = store:list_namespaces{ suffix = { "public" } }
  T.eq(#public_namespaces, 3, name .. ": suffix count")
  for _, ns in ipairs(public_namespaces) do T.eq(ns[#ns], "public", name .. ": suffix") end

  for _, ns in ipairs(store:list_namespaces{ max_depth = 2 }) do
    T.check(#ns <= 2, name .. ": max depth")
  end

  T.eq(#store:list_namespaces{ limit = 3 }, 3, name .. ": limit")

  -- Cleanup
  for _, ns in ipairs(test_namespaces) do store:delete(ns, "dummy") end
end)
T.finish()
