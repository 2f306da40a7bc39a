-- langgraph: test_retry.py::test_set_node_defaults_timeout
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
-- set_node_defaults(timeout=...) is g:set_node_defaults{ timeout = ... }.

local graph = sst.StateGraph{ foo = sst.reducers.replace }
graph:set_node_defaults{ timeout = { run_timeout = 0.05 } }
graph:add_node("slow", function(state)
  sleep(1)  -- Python sleeps 10 s; a second is enough against a 0.05 s timeout
  return { foo = "should-not-happen" }
end)
graph:add_edge(sst.START, "slow")
local app = graph:compile()
raises_timeout(function() app:invoke({ foo = "" }) end, "invoke")
T.finish()
