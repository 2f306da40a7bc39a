-- langgraph: libs/checkpoint-sqlite/tests/test_ttl.py::test_async_asearch_refresh_ttl
-- The async test has no sync twin; its calls are the sync ones here
-- (asearch is search, aget get). On SqliteStore with a temporary file.
-- time.sleep is store:advance_clock (the store opened with clock = "manual"):
-- the test's time is the store's, so a busy machine cannot stretch it.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local ttl_seconds = 4.0 -- Increased TTL for less sensitivity to timing
local ttl_minutes = ttl_seconds / 60.0
local store = sst.SqliteStore(S.temp_path(),
                              { ttl = { default_ttl = ttl_minutes, refresh_on_read = true }, clock = "manual" })

local namespace = { "docs", "user1" }
-- t=0: items put, expire at t=4.0s
store:put(namespace, "item1", { text = "content1", id = 1 })
store:put(namespace, "item2", { text = "content2", id = 2 })

-- t=3.0s
store:advance_clock(ttl_seconds * 0.75)

-- search with refresh_ttl=true for item1: its new expiry is t=7.0s; item2's stays t=4.0s.
local searched_items = store:search(namespace, { filter = { id = 1 }, refresh_ttl = true })
T.eq(#searched_items, 1, "one searched")
T.eq(searched_items[1] and searched_items[1].key, "item1", "item1 searched")

-- t=5.0s: item1 alive, item2 gone after a sweep
store:advance_clock(ttl_seconds * 0.5)
store:sweep_ttl()

local item1_check1 = store:get(namespace, "item1", { refresh_ttl = false })
T.check(item1_check1 ~= nil, "Item1 should exist after search refresh and first sweep")
T.eq(item1_check1 and item1_check1.value.text, "content1", "item1 text")
T.check(store:get(namespace, "item2", { refresh_ttl = false }) == nil,
        "Item2 should be gone after its original TTL expired")

-- t=7.5s: item1 expired at t=7.0s
store:advance_clock(ttl_seconds * 0.625)
store:sweep_ttl()
T.check(store:get(namespace, "item1", { refresh_ttl = false }) == nil,
        "Item1 should be gone after its refreshed TTL expired")
S.cleanup()
T.finish()
