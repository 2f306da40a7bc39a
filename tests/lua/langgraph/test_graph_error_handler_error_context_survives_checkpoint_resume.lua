-- langgraph: test_retry.py::test_graph_error_handler_error_context_survives_checkpoint_resume
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- The handler's node name __error_handler__<node> is LangGraph's.

local captured = {}
local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("always_failing", function(state) error("failed before handler") end, {
  error_handler = function(state, err)
    captured.from_node_name = err.node
    captured.from_node_error = err.error
    return { foo = "handled_after_resume" }
  end,
})
g:add_edge(sst.START, "always_failing")
local config = lg.thread("graph-error-resume")
local graph = g:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "__error_handler__always_failing" } }

-- First run pauses before handler, after failure context is checkpointed.
graph:invoke({ foo = "" }, config)
-- Resume should execute handler and recover serialized error context.
local result = graph:invoke(nil, config)
T.eq(result.foo, "handled_after_resume", "result")
T.eq(captured.from_node_name, "always_failing", "error.node")
T.check(type(captured.from_node_error) == "table" and captured.from_node_error.code ~= nil, "error.error is an error")
T.finish()
