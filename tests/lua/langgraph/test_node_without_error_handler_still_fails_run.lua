-- langgraph: test_retry.py::test_node_without_error_handler_still_fails_run
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("fail_without_handler", function(state) error("no handler") end)
g:add_edge(sst.START, "fail_without_handler")
local graph = g:compile()

lg.raises(function() graph:invoke({ foo = "" }) end, "ValueError", "no handler")
T.finish()
