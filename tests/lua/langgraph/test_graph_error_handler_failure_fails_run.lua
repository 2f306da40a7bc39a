-- langgraph: test_retry.py::test_graph_error_handler_failure_fails_run
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("always_failing", function(state) error("Always fails") end,
           { error_handler = function(state) error("handler failed") end })
g:add_edge(sst.START, "always_failing")
local graph = g:compile()

-- RuntimeError: a node's own error
lg.raises(function() graph:invoke({ foo = "" }) end, "NodeError", "handler failed")
T.finish()
