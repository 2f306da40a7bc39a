-- langgraph: libs/checkpoint/tests/test_store.py::test_list_namespaces_pagination
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

local function range(a, b)
  local out = {}
  for i = a, b - 1 do out[#out + 1] = { "namespace", string.format("sub_%02d", i) } end
  return out
end

S.each_store(nil, function(store, name)
  for i = 0, 19 do
    store:put({ "namespace", string.format("sub_%02d", i) }, string.format("id_%02d", i),
              { data = string.format("value_%02d", i) })
  end
  T.eq(store:list_namespaces{ prefix = { "namespace" }, limit = 5, offset = 0 }, range(0, 5),
       name .. ": page 1")
  T.eq(store:list_namespaces{ prefix = { "namespace" }, limit = 5, offset = 5 }, range(5, 10),
       name .. ": page 2")
  T.eq(store:list_namespaces{ prefix = { "namespace" }, limit = 5, offset = 15 }, range(15, 20),
       name .. ": page 4")
end)
T.finish()
