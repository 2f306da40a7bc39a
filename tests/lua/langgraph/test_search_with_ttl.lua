-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_search_with_ttl
-- On SqliteStore with a temporary file, as in Python.
-- time.sleep is store:advance_clock (the store opened with clock = "manual"):
-- the test's time is the store's, so a busy machine cannot stretch it.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local ttl_seconds = 1
local ttl_minutes = ttl_seconds / 60
local store = sst.SqliteStore(S.temp_path(), { ttl = { default_ttl = ttl_minutes }, clock = "manual" })

store:put({ "test" }, "item1", { value = "apple" })
store:put({ "test" }, "item2", { value = "banana" })

-- Search before expiration
local results = store:search({ "test" }, { filter = { value = "apple" } })
T.eq(#results, 1, "one apple")
T.eq(results[1] and results[1].key, "item1", "item1")

-- Wait for TTL to expire
store:advance_clock(ttl_seconds + 1)
store:sweep_ttl()

-- Search after expiration
T.eq(#store:search({ "test" }, { filter = { value = "apple" } }), 0, "expired")
S.cleanup()
T.finish()
