-- langgraph: test_retry.py::test_graph_with_single_retry_policy
-- ValueError raised by the node is a plain Lua error() (kind SST_ETASK), so
-- retry_on=ValueError is retry_on = { "SST_ETASK" }. runtime.execution_info
-- .node_attempt is ctx.attempt; .node_first_attempt_time is
-- ctx.execution_info.node_first_attempt_time. time.sleep is not mocked: the
-- gaps between attempts are measured with the wall clock and must be at
-- least the expected sleeps (0.01, 0.02) and less than 0.1 s more.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local now = lg.now

local attempt_count = 0
local attempt_numbers, first_attempt_times, started = {}, {}, {}

local function failing_node(state, input, ctx)
  started[#started + 1] = now()
  attempt_count = attempt_count + 1
  T.eq(ctx.attempt, attempt_count, "node_attempt")
  attempt_numbers[#attempt_numbers + 1] = ctx.attempt
  local info = ctx.execution_info
  first_attempt_times[#first_attempt_times + 1] = info and info.node_first_attempt_time or sst.null
  if attempt_count < 3 then -- Fail the first two attempts
    error("Intentional failure")
  end
  return { foo = "success" }
end

local function other_node(state) return { foo = "other_node" } end

-- Create a retry policy with specific parameters
local retry_policy = {
  max_attempts = 3,
  initial_interval = 0.01, -- Short interval for tests
  backoff_factor = 2.0,
  jitter = false, -- Disable jitter for predictable timing
  retry_on = { "SST_ETASK" },
}

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("failing_node", failing_node, { retry = retry_policy })
g:add_node("other_node", other_node)
g:add_edge(sst.START, "failing_node")
g:add_edge("failing_node", "other_node")
local graph = g:compile()

local result = graph:invoke({ foo = "" })

-- Verify retry behavior
T.eq(attempt_count, 3, "The node should have been tried 3 times")
T.eq(attempt_numbers, { 1, 2, 3 }, "attempt numbers")
T.eq(#first_attempt_times, 3, "first attempt times")
T.check(first_attempt_times[1] ~= sst.null, "first_attempt_times[0] is not None")
T.eq(first_attempt_times[2], first_attempt_times[1], "first_attempt_times[1]")
T.eq(first_attempt_times[3], first_attempt_times[1], "first_attempt_times[2]")
T.eq(result.foo, "other_node", "Final result should be from other_node")

-- Verify the sleep intervals
for i, expected in ipairs({ 0.01, 0.02 }) do
  local gap = (started[i + 1] or 0) - (started[i] or 0)
  T.check(gap >= expected and gap < expected + 0.1,
          string.format("sleep %d: expected %.2f s, measured %.3f s", i, expected, gap))
end
T.finish()
