-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_list_namespaces_segment_boundary
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  for _, ns in ipairs{ { "foo" }, { "foo", "child" }, { "foobar" }, { "foobar", "baz" },
                       { "uid", "users", "alice" }, { "uid", "users", "malice" },
                       { "uid", "a", "b", "alice" } } do
    store:put(ns, "k", { v = 1 })
  end
  local function list(q)
    q.limit = 100
    return S.ns_set(store:list_namespaces(q))
  end
  T.eq(list{ prefix = { "foo" } }, { "foo", "foo.child" }, name .. ": foo")
  -- Suffix must align to a segment: "malice" does not end with the "alice" segment.
  T.eq(list{ suffix = { "alice" } }, { "uid.a.b.alice", "uid.users.alice" }, name .. ": alice")
  -- "*" spans exactly one segment.
  T.eq(list{ prefix = { "uid", "*", "alice" } }, { "uid.users.alice" }, name .. ": wildcard")
  -- Prefix matching stays open-ended across depth.
  T.eq(list{ prefix = { "uid" } }, { "uid.a.b.alice", "uid.users.alice", "uid.users.malice" },
       name .. ": uid")
end)
T.finish()
