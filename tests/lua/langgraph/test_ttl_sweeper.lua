-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_ttl_sweeper
-- On SqliteStore with a temporary file, as in Python. The sweeper thread
-- starts with the store when ttl.sweep_interval_minutes is set and stops
-- when the store goes (store.h): start_ttl_sweeper and stop_ttl_sweeper
-- have no counterpart.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local ttl_seconds = 2
local ttl_minutes = ttl_seconds / 60
local store = sst.SqliteStore(S.temp_path(), {
  ttl = { default_ttl = ttl_minutes, sweep_interval_minutes = ttl_minutes / 2 },
})

-- Store an item with TTL
store:put({ "test" }, "item1", { value = "test" })
T.check(store:get({ "test" }, "item1") ~= nil, "there initially")

-- Wait for TTL to expire and the sweeper to run
S.sleep(ttl_seconds + (ttl_seconds / 2) + 0.5)

-- Item should be gone now (swept automatically). A busy machine may run the sweeper
-- thread late: it is waited for (reads that do not refresh the TTL), at most 30 s
-- x SST_TEST_TIME_SCALE.
local scale = math.max(1, tonumber(os.getenv("SST_TEST_TIME_SCALE") or "") or 1)
local deadline = os.time() + 30 * scale
while store:get({ "test" }, "item1", { refresh_ttl = false }) ~= nil and os.time() < deadline do
  S.sleep(0.1)
end
T.check(store:get({ "test" }, "item1", { refresh_ttl = false }) == nil, "swept by the sweeper")
store = nil
collectgarbage() -- stops the sweeper
S.cleanup()
T.finish()
