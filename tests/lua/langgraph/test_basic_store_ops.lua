-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::TestSqliteStore::test_basic_store_ops
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local namespace = { "test", "documents" }
  local item_id = "doc1"
  local item_value = { title = "Test Document", content = "Hello, World!" }

  store:put(namespace, item_id, item_value)
  local item = store:get(namespace, item_id)
  T.check(item ~= nil, name .. ": item")
  T.eq(item.namespace, namespace, name .. ": namespace")
  T.eq(item.key, item_id, name .. ": key")
  T.eq(item.value, item_value, name .. ": value")

  -- Test update
  -- Small delay to ensure the updated timestamp is different
  S.sleep(0.01)
  local updated_value = { title = "Updated Document", content = "Hello, Updated!" }
  store:put(namespace, item_id, updated_value)
  local updated_item = store:get(namespace, item_id)
  T.eq(updated_item.value, updated_value, name .. ": updated value")

  -- Test get from non-existent namespace
  T.check(store:get({ "test", "other_documents" }, item_id) == nil, name .. ": other namespace")

  -- Test delete
  store:delete(namespace, item_id)
  T.check(store:get(namespace, item_id) == nil, name .. ": deleted")
end)
T.finish()
