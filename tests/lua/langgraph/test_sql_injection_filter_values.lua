-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_sql_injection_filter_values
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  store:put({ "docs" }, "doc1", { access = "public", title = "Public Document" })
  store:put({ "docs" }, "doc2", { access = "private", title = "Private Document" })
  store:put({ "docs" }, "doc3", { access = "secret", title = "Secret Document" })

  local function count(value)
    return #store:search({ "docs" }, { filter = { access = value } })
  end
  T.eq(count("public' OR '1'='1"), 0, name .. ": single quote injection")
  T.eq(count("public'; --"), 0, name .. ": comment injection")
  T.eq(count("public' UNION SELECT * FROM store --"), 0, name .. ": UNION injection")
  T.eq(count("public\0' OR '1'='1"), 0, name .. ": NUL byte")
  T.eq(count("''''"), 0, name .. ": quotes")

  store:put({ "docs" }, "doc4", { title = "O'Brien's Document", access = "public" })
  local results = store:search({ "docs" }, { filter = { title = "O'Brien's Document" } })
  T.eq(#results, 1, name .. ": legitimate quote")
  T.eq(results[1] and results[1].value.title, "O'Brien's Document", name .. ": O'Brien")

  T.eq(count("public' OR 'א'='א"), 0, name .. ": unicode injection")
end)
T.finish()
