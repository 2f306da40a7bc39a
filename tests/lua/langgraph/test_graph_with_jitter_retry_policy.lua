-- langgraph: test_retry.py::test_graph_with_jitter_retry_policy
-- ValueError raised by the node is a plain Lua error() (kind SST_ETASK), so
-- retry_on=ValueError is retry_on = { "SST_ETASK" }. random.uniform and
-- time.sleep cannot be mocked: the measured gap between the attempts must be
-- the interval plus a jitter in [0, 1] s (LangGraph's random.uniform(0, 1)),
-- i.e. at least 0.01 s (below 1.01 s, but a busy machine stretches sleeps).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local now = lg.now

local attempt_count = 0
local started = {}
local function failing_node(state)
  started[#started + 1] = now()
  attempt_count = attempt_count + 1
  if attempt_count < 2 then -- Fail the first attempt
    error("Intentional failure")
  end
  return { foo = "success" }
end

-- Create a retry policy with jitter enabled
local retry_policy = {
  max_attempts = 3,
  initial_interval = 0.01,
  jitter = true, -- Enable jitter for randomized backoff
  retry_on = { "SST_ETASK" },
}

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("failing_node", failing_node, { retry = retry_policy })
g:add_edge(sst.START, "failing_node")
local graph = g:compile()

local result = graph:invoke({ foo = "" })

-- Verify retry behavior
T.eq(attempt_count, 2, "The node should have been tried twice")
T.eq(result.foo, "success", "result")

-- Verify jitter was applied: sleep(0.01 + uniform(0, 1))
local gap = (started[2] or 0) - (started[1] or 0)
-- Measured on the wall clock (sleep is not mocked): at least the smallest delay; the
-- upper end only bounds a hang (10 times the largest, scaled), as a busy machine may
-- stretch any sleep.
local scale = math.max(1, tonumber(os.getenv("SST_TEST_TIME_SCALE") or "") or 1)
T.check(gap >= 0.01 and gap < 10 * 1.01 * scale, string.format("sleep with jitter: measured %.3f s", gap))
T.finish()
