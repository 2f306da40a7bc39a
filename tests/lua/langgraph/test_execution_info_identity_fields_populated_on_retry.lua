-- langgraph: test_retry.py::test_execution_info_identity_fields_populated_on_retry
-- runtime.execution_info is ctx.execution_info, read while the node runs.
-- ValueError raised by the node is a plain Lua error() (kind SST_ETASK).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local attempt_count = 0
local captured_infos = {}
local function failing_node(state, input, ctx)
  attempt_count = attempt_count + 1
  local info = ctx.execution_info or {}
  captured_infos[#captured_infos + 1] = {
    thread_id = info.thread_id,
    run_id = info.run_id,
    node_attempt = info.node_attempt,
    node_first_attempt_time = info.node_first_attempt_time,
    checkpoint_ns = info.checkpoint_ns,
  }
  if attempt_count < 2 then error("Intentional failure") end
  return { foo = "success" }
end

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("failing_node", failing_node,
           { retry = { max_attempts = 3, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } } })
g:add_edge(sst.START, "failing_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local result = graph:invoke({ foo = "" }, lg.thread("retry-thread"))
T.eq(result.foo, "success", "result")
T.eq(#captured_infos, 2, "attempts")

-- Both attempts should have the same thread_id and first_attempt_time
T.eq(captured_infos[1].thread_id, "retry-thread", "thread_id 1")
T.eq(captured_infos[2].thread_id, "retry-thread", "thread_id 2")
T.eq(captured_infos[1].node_first_attempt_time, captured_infos[2].node_first_attempt_time, "same first attempt time")

-- node_attempt should increment
T.eq(captured_infos[1].node_attempt, 1, "node_attempt 1")
T.eq(captured_infos[2].node_attempt, 2, "node_attempt 2")
T.finish()
