-- langgraph: test_retry.py::test_entrypoint_timeout_e2e
-- An async test in Python (LangGraph accepts timeouts on async entrypoints
-- only; Lua functions are synchronous). @entrypoint(timeout=TimeoutPolicy(
-- idle_timeout=)) is sst.entrypoint{ timeout = { idle_timeout = s } }, a
-- NodeTimeoutError an error of kind SST_ETIMEOUT, asyncio.sleep sst.sleep.
local sst = superstep
local T = require("checks")

local function raises_timeout(fn, what)
  local ok, err = pcall(fn)
  T.check(not ok, what .. ": expected NodeTimeoutError")
  T.check(type(err) == "table" and err.code == "SST_ETIMEOUT",
          what .. ": expected SST_ETIMEOUT, got " .. tostring(type(err) == "table" and err.code or err))
  return err
end

local slow_workflow = sst.entrypoint{ name = "slow_workflow", timeout = { idle_timeout = 0.05 } }(function(x)
  sst.sleep(0.2)
  return x
end)

raises_timeout(function() slow_workflow:invoke(1) end, "invoke")
T.finish()
