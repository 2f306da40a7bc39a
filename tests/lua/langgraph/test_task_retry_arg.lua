-- langgraph: test_deprecation.py::test_task_retry_arg
-- deliberate: `retry` is the name of superstep's retry option (as on
--   add_node), not a deprecated alias of retry_policy: declaring a task with
--   it works and warns nothing (LangGraph warns LangGraphDeprecatedSinceV05).
-- Python only declares the task; the port also runs it once.
local sst = superstep
local T = require("checks")

local ok, my_task = pcall(function()
  return sst.task{ name = "my_task", retry = true }(function(state)
    return state
  end)
end)
T.check(ok, "task{retry = ...} is accepted: " .. tostring(my_task))

if ok then
  local app = sst.entrypoint{ name = "app" }(function(state)
    return my_task(state):result()
  end)
  T.eq(app:invoke({ a = 1 }), { a = 1 }, "the task runs")
end
T.finish()
