-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_custom_value
-- On SqliteStore with a temporary file, as in Python. The reads at 2 s
-- refresh item2's TTL (refresh_on_read defaults to true, store.h), to 5 s:
-- it is gone at 6 s all the same.
-- time.sleep is store:advance_clock (the store opened with clock = "manual"):
-- the test's time is the store's, so a busy machine cannot stretch it.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local store = sst.SqliteStore(S.temp_path(), { clock = "manual" })

-- Store items with different TTLs
store:put({ "test" }, "item1", { value = "short" }, { ttl = 1 / 60 }) -- 1 second
store:put({ "test" }, "item2", { value = "long" }, { ttl = 3 / 60 }) -- 3 seconds

-- Item with short TTL
store:advance_clock(2) -- Wait for short TTL
store:sweep_ttl()

-- Short TTL item should be gone, long TTL item should remain
T.check(store:get({ "test" }, "item1") == nil, "short gone")
T.check(store:get({ "test" }, "item2") ~= nil, "long remains")

-- Wait for the second item's TTL
store:advance_clock(4)
store:sweep_ttl()

-- Now both should be gone
T.check(store:get({ "test" }, "item2") == nil, "long gone")
S.cleanup()
T.finish()
