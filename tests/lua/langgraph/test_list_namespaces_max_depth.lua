-- langgraph: libs/checkpoint/tests/test_store.py::test_list_namespaces_max_depth
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local namespaces = {
    { "a", "b", "c", "d" },
    { "a", "b", "c", "e" },
    { "a", "b", "f" },
    { "a", "g" },
    { "h", "i", "j", "k" },
  }
  for i, ns in ipairs(namespaces) do
    store:put(ns, "id_" .. (i - 1), { data = string.format("value_%02d", i - 1) })
  end
  local result = store:list_namespaces{ max_depth = 2 }
  T.eq(S.sorted(result), S.sorted{ { "a", "b" }, { "a", "g" }, { "h", "i" } }, name)
end)
T.finish()
