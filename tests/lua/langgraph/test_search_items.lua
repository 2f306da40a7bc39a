-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_search_items
-- Run on InMemoryStore and SqliteStore (":memory:" and a file), with the
-- Python test's index.
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts{ "key0", "key1", "key3" }, function(store, name)
  local base = "test_search_items"
  local test_namespaces = {
    { base, "documents", "user1" },
    { base, "documents", "user2" },
    { base, "reports", "department1" },
    { base, "reports", "department2" },
  }
  local test_items = {
    { title = "Doc 1", author = "John Doe", tags = { "important" } },
    { title = "Doc 2", author = "Jane Smith", tags = { "draft" } },
    { title = "Report A", author = "John Doe", tags = { "final" } },
    { title = "Report B", author = "Alice Johnson", tags = { "draft" } },
  }
  for i, ns in ipairs(test_namespaces) do store:put(ns, "item_" .. ns[#ns], test_items[i]) end

  -- 1. Search documents
  local docs = store:search({ base, "documents" })
  T.eq(#docs, 2, name .. ": documents")
  for _, item in ipairs(docs) do T.eq(item.namespace[2], "documents", name .. ": documents ns") end

  -- 2. Search reports
  local reports = store:search({ base, "reports" })
  T.eq(#reports, 2, name .. ": reports")
  for _, item in ipairs(reports) do T.eq(item.namespace[2], "reports", name .. ": reports ns") end

  -- 3. Pagination
  local first_page = store:search({ base }, { limit = 2, offset = 0 })
  local second_page = store:search({ base }, { limit = 2, offset = 2 })
  T.eq(#first_page, 2, name .. ": first page")
  T.eq(#second_page, 2, name .. ": second page")
  for _, item in ipairs(first_page) do
    T.check(S.find(second_page, item.key) == nil, name .. ": pages disjoint")
  end
  T.eq(#store:search({ base }), 4, name .. ": all")

  local john_items = store:search({ base }, { filter = { author = "John Doe" } })
  T.eq(#john_items, 2, name .. ": John")
  for _, item in ipairs(john_items) do T.eq(item.value.author, "John Doe", name .. ": author") end

  local draft_items = store:search({ base }, { filter = { tags = { "draft" } } })
  T.eq(#draft_items, 2, name .. ": drafts")
  for _, item in ipairs(draft_items) do
    T.check(S.has(item.value.tags, "draft"), name .. ": draft tag")
  end

  for _, ns in ipairs(test_namespaces) do store:delete(ns, "item_" .. ns[#ns]) end
end)
T.finish()
