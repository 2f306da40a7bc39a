-- langgraph: test_retry.py::test_graph_with_max_attempts_exceeded
-- ValueError raised by the node is a plain Lua error() (kind SST_ETASK), so
-- retry_on=ValueError is retry_on = { "SST_ETASK" }. time.sleep is not
-- mocked: the gap between the two attempts must be at least 0.01 s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local now = lg.now

local started = {}
local function always_failing_node(state)
  started[#started + 1] = now()
  error("Always fails")
end

-- Create a retry policy with limited attempts
local retry_policy = { max_attempts = 2, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } }

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("always_failing", always_failing_node, { retry = retry_policy })
g:add_edge(sst.START, "always_failing")
local graph = g:compile()

-- Test graph execution
lg.raises(function() graph:invoke({ foo = "" }) end, "ValueError", "Always fails")

T.eq(#started, 2, "attempts")
local gap = (started[2] or 0) - (started[1] or 0)
-- Measured on the wall clock (sleep is not mocked): at least the delay; no upper
-- bound, as a busy machine may stretch any sleep.
T.check(gap >= 0.01, string.format("sleep: expected 0.01 s, measured %.3f s", gap))
T.finish()
