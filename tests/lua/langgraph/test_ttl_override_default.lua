-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_override_default
-- deliberate: reads refresh TTLs unless ttl.refresh_on_read is false: that
--   is the default of LangGraph's TTLConfig and of its BaseStore.get, which
--   asks every read to refresh (store.h, sst_store_opts.refresh_on_read).
--   LangGraph's SqliteStore refreshes only when its ttl config sets
--   refresh_on_read, so in Python the reads at 2 s leave item2's expiry at
--   5 s; here they move it to 7 s: item2 is still there at 6 s and gone at
--   7.5 s (read with refresh_ttl = false, which does not move it).
-- On SqliteStore with a temporary file, as in Python. put(..., ttl=None) is
-- put(..., {ttl = false}) (nil would mean "not given": the default).
-- time.sleep is store:advance_clock (the store opened with clock = "manual"):
-- the test's time is the store's, so a busy machine cannot stretch it.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local store = sst.SqliteStore(S.temp_path(), { ttl = { default_ttl = 5 / 60 }, clock = "manual" }) -- 5 seconds default

-- Store an item with shorter than default TTL
store:put({ "test" }, "item1", { value = "override" }, { ttl = 1 / 60 }) -- 1 second
-- Store an item with default TTL
store:put({ "test" }, "item2", { value = "default" }) -- Uses default 5 seconds
-- Store an item with no TTL
store:put({ "test" }, "item3", { value = "permanent" }, { ttl = false })

-- Wait for the override TTL to expire
store:advance_clock(2)
store:sweep_ttl()

T.check(store:get({ "test" }, "item1") == nil, "override expired")
T.check(store:get({ "test" }, "item2") ~= nil, "default still there (expires at 7 s now)")
T.check(store:get({ "test" }, "item3") ~= nil, "permanent still there")

-- Wait past the default TTL counted from the put
store:advance_clock(4)
store:sweep_ttl()

local no_refresh = { refresh_ttl = false }
T.check(store:get({ "test" }, "item2", no_refresh) ~= nil, "default refreshed at 2 s: alive at 6 s")
T.check(store:get({ "test" }, "item3", no_refresh) ~= nil, "permanent remains")

-- Wait past the refreshed TTL
store:advance_clock(1.5)
store:sweep_ttl()
T.check(store:get({ "test" }, "item2", no_refresh) == nil, "default expired")
T.check(store:get({ "test" }, "item3", no_refresh) ~= nil, "permanent still remains")
S.cleanup()
T.finish()
