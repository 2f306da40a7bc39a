-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_numeric_filter_safety
-- deliberate: a filter is a JSON value (store.h), and JSON has no NaN or
--   infinities: a filter holding one is refused with SST_ERANGE naming the
--   problem, where SqliteStore compares with float("inf") and matches
--   nothing for NaN. The other cases are as in Python (10**100 is 1e100).
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "items" }, "item1", { price = 10, quantity = 5 })
  store:put({ "items" }, "item2", { price = 20, quantity = 3 })
  store:put({ "items" }, "item3", { price = 30, quantity = 1 })

  local function search(op, value)
    return store:search({ "items" }, { filter = { price = { [op] = value } } })
  end
  local results = search("$gt", 15)
  T.eq(#results, 2, name .. ": > 15")
  for _, r in ipairs(results) do T.check(r.value.price > 15, name .. ": price > 15") end

  S.raises(function() search("$lt", math.huge) end, "SST_ERANGE", "NaN and infinities",
           name .. ": infinity")
  S.raises(function() search("$gt", -math.huge) end, "SST_ERANGE", "NaN and infinities",
           name .. ": -infinity")
  S.raises(function() search("$eq", 0 / 0) end, "SST_ERANGE", "NaN and infinities",
           name .. ": NaN")

  T.eq(#search("$lt", 1e100), 3, name .. ": very large")

  store:put({ "items" }, "item4", { price = -10, quantity = 0 })
  results = search("$lt", 0)
  T.eq(#results, 1, name .. ": negative")
  T.eq(results[1] and results[1].key, "item4", name .. ": item4")
end)
T.finish()
