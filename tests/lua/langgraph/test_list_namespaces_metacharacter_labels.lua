-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_list_namespaces_metacharacter_labels
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local pairs_ = { { "star*", "starX" }, { "q?m", "qXm" }, { "br[ack]et", "brXacXket" },
                   { "user_1", "userX1" }, { "a%b", "axxb" }, { "plus+", "plusX" } }
  for _, p in ipairs(pairs_) do
    store:put({ p[1] }, "k", { v = 1 })
    store:put({ p[2] }, "k", { v = 1 })
    store:put({ p[1], "child" }, "k", { v = 1 })
  end
  for _, p in ipairs(pairs_) do
    local label, decoy = p[1], p[2]
    local found = S.ns_set(store:list_namespaces{ prefix = { label }, limit = 100 })
    T.eq(found, S.ns_set{ { label }, { label, "child" } }, name .. ": " .. label)
    T.check(not S.has(found, decoy), name .. ": decoy " .. decoy)
    T.eq(S.ns_set(store:list_namespaces{ prefix = { label, "child" }, limit = 100 }),
         { label .. ".child" }, name .. ": " .. label .. " child")
  end
end)
T.finish()
