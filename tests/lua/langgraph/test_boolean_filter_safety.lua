-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_boolean_filter_safety
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "flags" }, "flag1", { active = true, name = "Feature A" })
  store:put({ "flags" }, "flag2", { active = false, name = "Feature B" })
  store:put({ "flags" }, "flag3", { active = true, name = "Feature C" })

  local results = store:search({ "flags" }, { filter = { active = true } })
  T.eq(#results, 2, name .. ": active")
  for _, r in ipairs(results) do T.check(r.value.active == true, name .. ": is true") end

  results = store:search({ "flags" }, { filter = { active = false } })
  T.eq(#results, 1, name .. ": inactive")
  T.check(results[1] and results[1].value.active == false, name .. ": is false")
end)
T.finish()
