-- langgraph: test_retry.py::test_set_node_defaults_error_handler_collides_with_user_node
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{ error_handler = function(state, err) return { foo = "handled" } end }
-- superstep may refuse the reserved name already here; either way it must be refused
local ok, err = pcall(function()
  g:add_node("__default_error_handler__", function(s) return s end)
  g:add_edge(sst.START, "__default_error_handler__")
  g:compile()
end)
T.check(not ok, "compile refuses a node named __default_error_handler__")
T.check(type(err) == "table" and err.code == "SST_EINVAL", "ValueError kind: " .. tostring(type(err) == "table" and err.code))
T.check(tostring(err):find("__default_error_handler__", 1, true) ~= nil, "error names the node: " .. tostring(err))
T.finish()
