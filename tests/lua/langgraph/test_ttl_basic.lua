-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_basic
-- On SqliteStore with a temporary file, as in Python (InMemoryStore's TTLs
-- are checked in tests/lua/test_store.lua).
-- time.sleep is store:advance_clock (the store opened with clock = "manual"):
-- the test's time is the store's, so a busy machine cannot stretch it.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local ttl_seconds = 1
local ttl_minutes = ttl_seconds / 60
local store = sst.SqliteStore(S.temp_path(), { ttl = { default_ttl = ttl_minutes }, clock = "manual" })

store:put({ "test" }, "item1", { value = "test" })
local item = store:get({ "test" }, "item1")
T.check(item ~= nil, "item stored")
T.eq(item and item.value.value, "test", "value")

store:advance_clock(ttl_seconds + 1.0)
store:sweep_ttl()
T.check(store:get({ "test" }, "item1") == nil, "swept")
S.cleanup()
T.finish()
