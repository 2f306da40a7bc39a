-- langgraph: test_pregel.py::test_sync_streaming_with_functional_api
-- time.sleep is sst.sleep, time.monotonic the wall clock (lg.now).
-- This test verifies that we're able to stream results as they're being
-- generated rather than have all the results arrive at once after the graph
-- has completed: the two `slow` updates arrive about the task delay apart.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local time_delay = 0.05

local slow = sst.task(function()
  sst.sleep(time_delay)
  return { tic = lg.now() }
end)

local graph = sst.entrypoint(function(inputs)
  local first = slow():result()
  local second = slow():result()
  return { first, second }
end)

local arrival_times = {}
for chunk in graph:stream({}) do
  if chunk.slow ~= nil then -- We'll just look at the updates from `slow`
    arrival_times[#arrival_times + 1] = lg.now()
  end
end

T.eq(#arrival_times, 2, "two slow updates")
local delta = (arrival_times[2] or 0) - (arrival_times[1] or 0)
-- Allow a small amount of scheduler jitter while still verifying the chunks
-- arrived separately rather than back-to-back after graph completion.
T.check(delta > time_delay * 0.8, string.format("delta %.3f s > %.3f s", delta, time_delay * 0.8))
T.finish()
