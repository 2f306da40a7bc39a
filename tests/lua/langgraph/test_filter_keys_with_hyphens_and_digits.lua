-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_filter_keys_with_hyphens_and_digits
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "docs" }, "hyphen", { ["access-level"] = "public", user = { ["access-level"] = "nested" } })
  store:put({ "docs" }, "digit", { ["123abc"] = "ok", user = { ["123abc"] = "ok2" } })

  local function keys(filter) return S.keys(store:search({ "docs" }, { filter = filter })) end
  T.eq(keys{ ["access-level"] = "public" }, { "hyphen" }, name .. ": hyphen")
  T.eq(keys{ ["user.access-level"] = "nested" }, { "hyphen" }, name .. ": nested hyphen")
  T.eq(keys{ ["123abc"] = "ok" }, { "digit" }, name .. ": digit")
  T.eq(keys{ ["user.123abc"] = "ok2" }, { "digit" }, name .. ": nested digit")
end)
T.finish()
