-- langgraph: test_retry.py::test_graph_with_single_retry_policy
-- ValueError raised by the node is a plain Lua error() (kind SST_ETASK), so
-- retry_on=ValueError is retry_on = { "SST_ETASK" }. runtime.execution_info
-- .node_attempt is ctx.attempt; .node_first_attempt_time is
-- ctx.execution_info.node_first_attempt_time. time.sleep is not mocked: the
-- gaps between attempts are measured with the wall clock and must be at
-- least the expected sleeps (0.01, 0.02); not bounded above, as a busy
-- machine may stretch any sleep.
-- Added: the tasks and debug streams of the same graph, as LangGraph emits
-- them: run_with_retry (pregel/_retry.py) retries inside the task and emits
-- nothing between attempts, so each task has one "task" event when its step
-- starts and one "task_result" when it is committed (the successful
-- attempt's writes, error None), and no checkpoint is written between
-- attempts.
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
  T.check(gap >= expected,
          string.format("sleep %d: expected %.2f s, measured %.3f s", i, expected, gap))
end

-- The streams: one start and one result per task, whatever the attempts.
local function run_streams(mode, config)
  attempt_count = 0
  attempt_numbers, first_attempt_times, started = {}, {}, {}
  local app = config and g:compile{ checkpointer = sst.MemorySaver() } or graph
  local out = {}
  for chunk in app:stream({ foo = "" }, config, mode) do out[#out + 1] = chunk end
  T.eq(attempt_count, 3, mode .. ": attempts")
  return out
end

local tasks = run_streams("tasks")
local shape = {}
for i, c in ipairs(tasks) do
  shape[i] = { c.name, c.result ~= nil and "result" or "start" }
end
T.eq(shape, { { "failing_node", "start" }, { "failing_node", "result" },
              { "other_node", "start" }, { "other_node", "result" } }, "tasks stream")
if #tasks == 4 then
  T.eq(tasks[1].input, { foo = "" }, "failing_node input")
  T.eq(tasks[1].triggers, { "branch:to:failing_node" }, "failing_node triggers")
  T.eq(tasks[2].id, tasks[1].id, "failing_node result id")
  T.eq(tasks[2].error, nil, "failing_node result error")
  T.eq(tasks[2].result, { foo = "success" }, "failing_node result")
  T.eq(tasks[2].interrupts, sst.array{}, "failing_node interrupts")
  T.eq(tasks[3].input, { foo = "success" }, "other_node input")
  T.eq(tasks[4].result, { foo = "other_node" }, "other_node result")
end

local debug = run_streams("debug", lg.thread("retry-debug"))
local kinds = {}
for i, e in ipairs(debug) do
  kinds[i] = { e.type, e.step, e.type == "checkpoint" and sst.null or e.payload.name }
end
T.eq(kinds, { { "checkpoint", -1, sst.null }, { "checkpoint", 0, sst.null },
              { "task", 1, "failing_node" }, { "task_result", 1, "failing_node" },
              { "checkpoint", 1, sst.null },
              { "task", 2, "other_node" }, { "task_result", 2, "other_node" },
              { "checkpoint", 2, sst.null } }, "debug stream")
if #debug == 8 then
  T.eq(debug[4].payload.id, debug[3].payload.id, "debug task_result id")
  T.eq(debug[4].payload.result, { foo = "success" }, "debug task_result")
  T.eq(debug[4].payload.error, nil, "debug task_result error")
  T.eq(debug[5].payload.values, { foo = "success" }, "checkpoint 1 values")
  T.eq(debug[5].payload.next, { "other_node" }, "checkpoint 1 next")
end
T.finish()
