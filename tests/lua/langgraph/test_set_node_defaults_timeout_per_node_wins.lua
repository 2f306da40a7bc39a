-- langgraph: test_retry.py::test_set_node_defaults_timeout_per_node_wins
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
graph:set_node_defaults{ timeout = { run_timeout = 0.01 } }
graph:add_node("quick", function(state)
  sleep(0.05)
  return { foo = "done" }
end, { timeout = { run_timeout = 5.0 } })
graph:add_edge(sst.START, "quick")
local app = graph:compile()
local result = app:invoke({ foo = "" })
T.eq(result.foo, "done", "result")
T.finish()
