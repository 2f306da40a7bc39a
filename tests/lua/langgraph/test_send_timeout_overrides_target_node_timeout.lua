-- langgraph: test_retry.py::test_send_timeout_overrides_target_node_timeout
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
-- Send("slow", state, timeout=...) is sst.Send("slow", state, { timeout = ... });
-- excinfo.value.node/kind/idle_timeout are fields of the error object.

local builder = sst.StateGraph{ x = sst.reducers.replace }
builder:add_node("slow", function(state, input)
  sleep(0.2)
  return { x = input.x + 1 }
end, { timeout = { idle_timeout = 1.0 } })
builder:add_conditional_edges(sst.START, function(state)
  return { sst.Send("slow", state, { timeout = { idle_timeout = 0.05 } }) }
end)
builder:add_edge("slow", sst.END)
local graph = builder:compile()

local err = raises_timeout(function() graph:invoke({ x = 1 }) end, "invoke")
if type(err) == "table" then
  T.eq(err.node, "slow", "node")
  T.eq(err.kind, "idle", "kind")
  T.eq(err.idle_timeout, 0.05, "idle_timeout")
end
T.finish()
