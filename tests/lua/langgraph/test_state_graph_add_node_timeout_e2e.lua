-- langgraph: test_retry.py::test_state_graph_add_node_timeout_e2e
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

local builder = sst.StateGraph{ x = sst.reducers.replace }
builder:add_node("slow", function(state)
  sleep(1.0)
  return { x = state.x + 1 }
end, { timeout = { idle_timeout = 0.05 } })
builder:add_edge(sst.START, "slow")
builder:add_edge("slow", sst.END)
local graph = builder:compile()
raises_timeout(function() graph:invoke({ x = 1 }) end, "invoke")
T.finish()
