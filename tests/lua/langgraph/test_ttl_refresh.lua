-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_refresh
-- On SqliteStore with a temporary file, as in Python.
-- time.sleep is store:advance_clock (the store opened with clock = "manual"):
-- the test's time is the store's, so a busy machine cannot stretch it.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local ttl_seconds = 1
local ttl_minutes = ttl_seconds / 60
local store = sst.SqliteStore(S.temp_path(),
                              { ttl = { default_ttl = ttl_minutes, refresh_on_read = true }, clock = "manual" })

-- Store an item with TTL
store:put({ "test" }, "item1", { value = "test" })

-- Sleep almost to expiration
store:advance_clock(ttl_seconds - 0.5)
T.eq(store:sweep_ttl(), 0, "nothing expired yet")

-- Get the item and refresh TTL
T.check(store:get({ "test" }, "item1", { refresh_ttl = true }) ~= nil, "refreshed")

store:advance_clock(ttl_seconds - 0.5)
T.eq(store:sweep_ttl(), 0, "still alive after refresh")

-- Get the item, should still be there
local item = store:get({ "test" }, "item1")
T.check(item ~= nil, "still there")
T.eq(item and item.value.value, "test", "value")

-- Sleep again but don't refresh this time
store:advance_clock(ttl_seconds + 0.75)
T.eq(store:sweep_ttl(), 1, "swept one")

-- Item should be gone now
T.check(store:get({ "test" }, "item1") == nil, "gone")
S.cleanup()
T.finish()
