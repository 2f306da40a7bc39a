-- langgraph: test_retry.py::test_set_node_defaults_error_handler_failure_fails_run
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- When the default handler itself raises, the run fails (no infinite
-- recursion, no double-routing).

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{ error_handler = function(state, err) error("default handler boom") end }
g:add_node("always_failing", function(state) error("node boom") end)
g:add_edge(sst.START, "always_failing")
local graph = g:compile()

lg.raises(function() graph:invoke({ foo = "" }) end, "NodeError", "default handler boom")
T.finish()
