-- langgraph: libs/checkpoint/tests/test_store.py::test_list_namespaces_basic
-- Run on InMemoryStore and SqliteStore (":memory:" and a file): one contract.
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local namespaces = {
    { "a", "b", "c" },
    { "a", "b", "d", "e" },
    { "a", "b", "d", "i" },
    { "a", "b", "f" },
    { "a", "c", "f" },
    { "b", "a", "f" },
    { "users", "123" },
    { "users", "456", "settings" },
    { "admin", "users", "789" },
  }
  for i, ns in ipairs(namespaces) do
    store:put(ns, "id_" .. (i - 1), { data = string.format("value_%02d", i - 1) })
  end

  local result = store:list_namespaces{ prefix = { "a", "b" } }
  T.eq(S.sorted(result), S.sorted{
    { "a", "b", "c" }, { "a", "b", "d", "e" }, { "a", "b", "d", "i" }, { "a", "b", "f" },
  }, name .. ": prefix")

  result = store:list_namespaces{ suffix = { "f" } }
  T.eq(S.sorted(result), S.sorted{ { "a", "b", "f" }, { "a", "c", "f" }, { "b", "a", "f" } },
       name .. ": suffix")

  result = store:list_namespaces{ prefix = { "a" }, suffix = { "f" } }
  T.eq(S.sorted(result), S.sorted{ { "a", "b", "f" }, { "a", "c", "f" } },
       name .. ": prefix and suffix")

  -- Test max_depth
  result = store:list_namespaces{ prefix = { "a", "b" }, max_depth = 3 }
  T.eq(S.sorted(result), S.sorted{ { "a", "b", "c" }, { "a", "b", "d" }, { "a", "b", "f" } },
       name .. ": max_depth")

  -- Test limit and offset
  result = store:list_namespaces{ prefix = { "a", "b" }, limit = 2 }
  T.eq(result, { { "a", "b", "c" }, { "a", "b", "d", "e" } }, name .. ": limit")

  result = store:list_namespaces{ prefix = { "a", "b" }, offset = 2 }
  T.eq(result, { { "a", "b", "d", "i" }, { "a", "b", "f" } }, name .. ": offset")

  result = store:list_namespaces{ prefix = { "a", "*", "f" } }
  T.eq(S.sorted(result), S.sorted{ { "a", "b", "f" }, { "a", "c", "f" } }, name .. ": wildcard")

  result = store:list_namespaces{ suffix = { "*", "f" } }
  T.eq(S.sorted(result), S.sorted{ { "a", "b", "f" }, { "a", "c", "f" }, { "b", "a", "f" } },
       name .. ": wildcard suffix")

  result = store:list_namespaces{ prefix = { "nonexistent" } }
  T.eq(result, {}, name .. ": nonexistent")

  result = store:list_namespaces{ prefix = { "users", "123" } }
  T.eq(result, { { "users", "123" } }, name .. ": users 123")
end)
T.finish()
