-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_search_namespace_segment_boundary
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  for _, ns in ipairs{ { "foo" }, { "foo", "child" }, { "foo", "child", "deep" }, { "foobar" },
                       { "foobar", "baz" }, { "foo2" } } do
    store:put(ns, "k", { v = 1 })
  end
  local function namespaces(prefix) return S.ns_set(store:search(prefix, { limit = 100 }), true) end
  T.eq(namespaces{ "foo" }, { "foo", "foo.child", "foo.child.deep" }, name .. ": foo")
  T.eq(namespaces{ "foobar" }, { "foobar", "foobar.baz" }, name .. ": foobar")
  T.eq(namespaces{ "foo2" }, { "foo2" }, name .. ": foo2")
  T.eq(namespaces{ "fo" }, {}, name .. ": fo")
end)
T.finish()
