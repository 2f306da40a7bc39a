-- langgraph: test_retry.py::test_state_graph_add_node_timeout_composes_with_retry
-- An async test in Python (LangGraph accepts timeouts on async nodes only;
-- Lua nodes are synchronous). timeout=TimeoutPolicy(run_timeout=, idle_timeout=)
-- is the node option timeout = { run_timeout = s, idle_timeout = s }, a
-- NodeTimeoutError an error of kind SST_ETIMEOUT, asyncio.sleep(s) a sleep.
local sst = superstep
local T = require("checks")

local function sleep(s) os.execute("sleep " .. s) end
local function raises_timeout(fn, what)
  local ok, err = pcall(fn)
  T.check(not ok, what .. ": expected NodeTimeoutError")
  T.check(type(err) == "table" and err.code == "SST_ETIMEOUT",
          what .. ": expected SST_ETIMEOUT, got " .. tostring(type(err) == "table" and err.code or err))
  return err
end
-- retry_on=NodeTimeoutError is retry_on = { "SST_ETIMEOUT" }.

local attempts = {}
local builder = sst.StateGraph{ x = sst.reducers.replace }
builder:add_node("flaky", function(state)
  attempts[#attempts + 1] = #attempts
  if #attempts < 2 then sleep(1.0) end
  return { x = state.x + 1 }
end, {
  timeout = { idle_timeout = 0.3 },
  retry = { max_attempts = 3, initial_interval = 0.0, jitter = false, retry_on = { "SST_ETIMEOUT" } },
})
builder:add_edge(sst.START, "flaky")
builder:add_edge("flaky", sst.END)
local graph = builder:compile()
local result = graph:invoke({ x = 0 })
T.eq(result, { x = 1 }, "result")
T.eq(#attempts, 2, "attempts")
T.finish()
