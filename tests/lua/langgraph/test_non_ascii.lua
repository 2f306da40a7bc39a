-- langgraph: libs/checkpoint/tests/test_store.py::test_non_ascii
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_non_ascii
-- The same test in both files, on InMemoryStore and SqliteStore (":memory:" and a file).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name)
  local ns = { "user_123", "memories" }
  store:put(ns, "1", { text = "这是中文" }) -- Chinese
  store:put(ns, "2", { text = "これは日本語です" }) -- Japanese
  store:put(ns, "3", { text = "이건 한국어야" }) -- Korean
  store:put(ns, "4", { text = "Это русский" }) -- Russian
  store:put(ns, "5", { text = "यह रूसी है" }) -- Hindi

  local result1 = store:search(ns, { query = "这是中文" })
  local result2 = store:search(ns, { query = "これは日本語です" })
  local result3 = store:search(ns, { query = "이건 한국어야" })
  local result4 = store:search(ns, { query = "Это русский" })
  local result5 = store:search(ns, { query = "यह रूसी है" })

  T.eq(result1[1].key, "1", name .. ": Chinese")
  T.eq(result2[1].key, "2", name .. ": Japanese")
  T.eq(result3[1].key, "3", name .. ": Korean")
  T.eq(result4[1].key, "4", name .. ": Russian")
  T.eq(result5[1].key, "5", name .. ": Hindi")
end)
T.finish()
