-- langgraph: test_retry.py::test_task_decorator_timeout_e2e
-- An async test in Python (LangGraph accepts timeouts on async tasks only;
-- Lua tasks are synchronous). @task(timeout=TimeoutPolicy(idle_timeout=))
-- is sst.task{ timeout = { idle_timeout = s } }, a NodeTimeoutError an error
-- of kind SST_ETIMEOUT, asyncio.sleep sst.sleep.
local sst = superstep
local T = require("checks")

local function raises_timeout(fn, what)
  local ok, err = pcall(fn)
  T.check(not ok, what .. ": expected NodeTimeoutError")
  T.check(type(err) == "table" and err.code == "SST_ETIMEOUT",
          what .. ": expected SST_ETIMEOUT, got " .. tostring(type(err) == "table" and err.code or err))
  return err
end

local slow_task = sst.task{ name = "slow_task", timeout = { idle_timeout = 0.05 } }(function(x)
  sst.sleep(0.2)
  return x + 1
end)

local workflow = sst.entrypoint{ name = "workflow" }(function(x)
  return slow_task(x):result()
end)

raises_timeout(function() workflow:invoke(1) end, "invoke")
T.finish()
