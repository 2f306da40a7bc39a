-- langgraph: test_retry.py::test_set_node_defaults_error_handler_skips_per_node_handler_nodes
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- If a per-node error handler itself raises, the default handler must NOT
-- catch it -- the run should fail.

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{ error_handler = function(state, err) return { foo = "default recovered" } end }
g:add_node("always_failing", function(state) error("node boom") end,
           { error_handler = function(state, err) error("handler boom") end })
g:add_edge(sst.START, "always_failing")
local graph = g:compile()

lg.raises(function() graph:invoke({ foo = "" }) end, "NodeError", "handler boom")
T.finish()
