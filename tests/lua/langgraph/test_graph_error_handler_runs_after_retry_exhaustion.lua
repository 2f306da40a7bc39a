-- langgraph: test_retry.py::test_graph_error_handler_runs_after_retry_exhaustion
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local attempts = 0
local captured = {}
local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("always_failing", function(state)
  attempts = attempts + 1
  error("Always fails", 0)
end, {
  retry = { max_attempts = 2, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } },
  error_handler = function(state, err)
    captured.from_node_name = err.node
    captured.from_node_error = err.error
    return sst.Command{ update = { foo = "handled" }, ["goto"] = "after_handler" }
  end,
})
g:add_node("after_handler", function(state) return { foo = state.foo .. "_after" } end)
g:add_edge(sst.START, "always_failing")
local graph = g:compile()

local result = graph:invoke({ foo = "" })
T.eq(attempts, 2, "attempts")
T.eq(result.foo, "handled_after", "result")
T.eq(captured.from_node_name, "always_failing", "error.node")
T.check(type(captured.from_node_error) == "table" and captured.from_node_error.code ~= nil, "error.error is an error")
T.eq(captured.from_node_error and tostring(captured.from_node_error), "Always fails", "str(error.error)")
T.finish()
