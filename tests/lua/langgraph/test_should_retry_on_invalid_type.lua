-- langgraph: test_retry.py::test_should_retry_on_invalid_type
-- Python raises TypeError("retry_on must be an Exception class ...") when the
-- policy is first used; superstep checks the option when the node is added,
-- so the port expects add_node to refuse retry_on = 123 with an error naming
-- retry_on (kind SST_EINVAL or SST_ETYPE).
local sst = superstep
local T = require("checks")

local g = sst.StateGraph{ foo = sst.reducers.replace }
local ok, err = pcall(function()
  g:add_node("node", function() error("test error") end, { retry = { retry_on = 123 } })
end)
T.check(not ok, "retry_on = 123 is refused")
T.check(type(err) == "table" and (err.code == "SST_EINVAL" or err.code == "SST_ETYPE"),
        "error kind: " .. tostring(type(err) == "table" and err.code))
T.check(tostring(err):find("retry_on", 1, true) ~= nil, "error names retry_on: " .. tostring(err))
T.finish()
