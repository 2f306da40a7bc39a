-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_basic_store_operations
-- Run on InMemoryStore and SqliteStore (":memory:" and a file), with the
-- Python test's index (CharacterEmbeddings, text_fields key0, key1, key3).
-- Timestamps are ISO strings of one format, so >= compares them as times.
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts{ "key0", "key1", "key3" }, function(store, name)
  local uid = S.uuid4():gsub("-", "")
  local namespace = { uid, "test", "documents" }
  local item_id = "doc1"
  local item_value = { title = "Test Document", content = "Hello, World!" }
  T.eq(#store:search({ uid }), 0, name .. ": empty")

  store:put(namespace, item_id, item_value)
  local item = store:get(namespace, item_id)
  T.check(item ~= nil, name .. ": item")
  T.eq(item.namespace, namespace, name .. ": namespace")
  T.eq(item.key, item_id, name .. ": key")
  T.eq(item.value, item_value, name .. ": value")
  T.check(item.created_at ~= nil, name .. ": created_at")
  T.check(item.updated_at ~= nil, name .. ": updated_at")

  local updated_value = { title = "Updated Test Document", content = "Hello, LangGraph!" }
  store:put(namespace, item_id, updated_value)
  local updated_item = store:get(namespace, item_id)
  T.check(updated_item ~= nil, name .. ": updated item")
  T.eq(updated_item.value, updated_value, name .. ": updated value")
  T.check(updated_item.updated_at >= item.updated_at, name .. ": updated_at moves on")

  T.check(store:get({ uid, "test", "other_documents" }, item_id) == nil, name .. ": other ns")

  local new_item_id = "doc2"
  store:put(namespace, new_item_id, { title = "Another Document", content = "Greetings!" })

  local items = store:search({ uid, "test" }, { limit = 10 })
  T.eq(#items, 2, name .. ": two items")
  T.check(S.find(items, item_id) ~= nil, name .. ": doc1 found")
  T.check(S.find(items, new_item_id) ~= nil, name .. ": doc2 found")

  local namespaces = store:list_namespaces{ prefix = { uid, "test" } }
  T.check(S.has(S.ns_set(namespaces), S.ns_str{ uid, "test", "documents" }), name .. ": listed")

  store:delete(namespace, item_id)
  store:delete(namespace, new_item_id)
  T.check(store:get(namespace, item_id) == nil, name .. ": doc1 deleted")
  T.check(store:get(namespace, new_item_id) == nil, name .. ": doc2 deleted")
  T.eq(#store:search({ uid, "test" }, { limit = 10 }), 0, name .. ": empty again")
end)
T.finish()
