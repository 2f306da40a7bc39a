-- langgraph: libs/checkpoint/tests/test_store.py::test_list_namespaces_no_conditions
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local namespaces = { { "a", "b" }, { "c", "d" }, { "e", "f", "g" } }
  for i, ns in ipairs(namespaces) do
    store:put(ns, "id_" .. (i - 1), { data = string.format("value_%02d", i - 1) })
  end
  T.eq(S.sorted(store:list_namespaces()), S.sorted(namespaces), name)
end)
T.finish()
