-- langgraph: test_retry.py::test_node_error_handlers_route_to_matching_handler
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ route = sst.reducers.replace, foo = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("route_node", function(state) return { foo = sst.array{} } end)
g:add_node("fail_a", function(state) error("a failed") end, { error_handler = function(state, err)
  T.eq(err.node, "fail_a", "handler_a error.node")
  return { foo = { "handled_a" } }
end })
g:add_node("fail_b", function(state) error("b failed") end, { error_handler = function(state, err)
  T.eq(err.node, "fail_b", "handler_b error.node")
  return { foo = { "handled_b" } }
end })
g:add_edge(sst.START, "route_node")
g:add_conditional_edges("route_node", function(state) return state.route end, { "fail_a", "fail_b" })
local graph = g:compile()

local result_a = graph:invoke({ route = "fail_a", foo = sst.array{} })
local result_b = graph:invoke({ route = "fail_b", foo = sst.array{} })
T.eq(result_a.foo, { "handled_a" }, "result a")
T.eq(result_b.foo, { "handled_b" }, "result b")
T.finish()
