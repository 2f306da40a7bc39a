-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_search
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local test_data = {
    { { "test", "docs" }, "doc1", { title = "First Doc", author = "Alice", tags = { "important" } } },
    { { "test", "docs" }, "doc2", { title = "Second Doc", author = "Bob", tags = { "draft" } } },
    { { "test", "images" }, "img1", { title = "Image 1", author = "Alice", tags = { "final" } } },
  }
  for _, d in ipairs(test_data) do store:put(d[1], d[2], d[3]) end

  T.eq(#store:search({ "test" }), 3, name .. ": all")

  local docs_items = store:search({ "test", "docs" })
  T.eq(#docs_items, 2, name .. ": docs")
  for _, item in ipairs(docs_items) do T.eq(item.namespace, { "test", "docs" }, name .. ": ns") end

  local alice_items = store:search({ "test" }, { filter = { author = "Alice" } })
  T.eq(#alice_items, 2, name .. ": Alice")
  for _, item in ipairs(alice_items) do T.eq(item.value.author, "Alice", name .. ": author") end

  T.eq(#store:search({ "test" }, { limit = 2 }), 2, name .. ": limit")
  T.eq(#store:search({ "test" }, { offset = 2 }), 1, name .. ": offset")

  -- Cleanup
  for _, d in ipairs(test_data) do store:delete(d[1], d[2]) end
end)
T.finish()
