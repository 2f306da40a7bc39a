-- langgraph: libs/checkpoint/tests/test_store.py::test_list_namespaces_with_wildcards
-- Run on InMemoryStore and SqliteStore (":memory:" and a file). The Python
-- test's last put has no assertion after it; it is kept as is.
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local namespaces = {
    { "users", "123" },
    { "users", "456" },
    { "users", "789", "settings" },
    { "admin", "users", "789" },
    { "guests", "123" },
    { "guests", "456", "preferences" },
  }
  for i, ns in ipairs(namespaces) do
    store:put(ns, "id_" .. (i - 1), { data = string.format("value_%02d", i - 1) })
  end

  local result = store:list_namespaces{ prefix = { "users", "*" } }
  T.eq(S.sorted(result), S.sorted{ { "users", "123" }, { "users", "456" },
                                   { "users", "789", "settings" } }, name .. ": users *")

  result = store:list_namespaces{ suffix = { "*", "preferences" } }
  T.eq(result, { { "guests", "456", "preferences" } }, name .. ": * preferences")

  result = store:list_namespaces{ prefix = { "*", "users" }, suffix = { "*", "settings" } }
  T.eq(result, {}, name .. ": prefix and suffix")

  store:put({ "admin", "users", "settings", "789" }, "foo", { data = "some_val" })
end)
T.finish()
