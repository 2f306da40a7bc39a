-- langgraph: test_deprecation.py::test_entrypoint_retry_arg
-- deliberate: `retry` is the name of superstep's retry option (as on
--   add_node), not a deprecated alias of retry_policy: declaring an
--   entrypoint with it works and warns nothing (LangGraph warns
--   LangGraphDeprecatedSinceV05).
-- Python only declares the entrypoint; the port also runs it once.
local sst = superstep
local T = require("checks")

local ok, my_entrypoint = pcall(function()
  return sst.entrypoint{ name = "my_entrypoint", retry = true }(function(state)
    return state
  end)
end)
T.check(ok, "entrypoint{retry = ...} is accepted: " .. tostring(my_entrypoint))

if ok then
  T.eq(my_entrypoint:invoke({ a = 1 }), { a = 1 }, "the entrypoint runs")
end
T.finish()
