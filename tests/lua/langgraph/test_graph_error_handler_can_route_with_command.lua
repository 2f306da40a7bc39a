-- langgraph: test_retry.py::test_graph_error_handler_can_route_with_command
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local attempts = 0
local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("always_failing", function(state)
  attempts = attempts + 1
  error("Always fails")
end, {
  retry = { max_attempts = 1, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } },
  error_handler = function(state) return sst.Command{ update = { foo = "handled" }, ["goto"] = "next_node" } end,
})
g:add_node("next_node", function(state) return { foo = state.foo .. "_next" } end)
g:add_edge(sst.START, "always_failing")
local graph = g:compile()

local result = graph:invoke({ foo = "" })
T.eq(attempts, 1, "attempts")
T.eq(result.foo, "handled_next", "result")
T.finish()
