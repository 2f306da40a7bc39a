-- langgraph: test_retry.py::test_set_node_defaults_error_handler_catches_all_nodes
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function build(defaults, fail_a_opts)
  local g = sst.StateGraph{ route = sst.reducers.replace, foo = { reducer = sst.reducers.append, default = sst.array{} } }
  g:set_node_defaults(defaults)
  g:add_node("route_node", function(state) return sst.Command{ ["goto"] = state.route } end)
  g:add_node("fail_a", function(state) error("a failed") end, fail_a_opts)
  g:add_node("fail_b", function(state) error("b failed") end)
  g:add_edge(sst.START, "route_node")
  g:add_conditional_edges("route_node", function(s) return s.route end, { "fail_a", "fail_b" })
  return g:compile()
end
local has = lg.has

local captured = { nodes = {} }
local graph = build({ error_handler = function(state, err)
  captured.nodes[#captured.nodes + 1] = err.node
  return { foo = { "handled_" .. err.node } }
end })

local result_a = graph:invoke({ route = "fail_a", foo = sst.array{} })
local result_b = graph:invoke({ route = "fail_b", foo = sst.array{} })
T.eq(result_a.foo, { "handled_fail_a" }, "result a")
T.eq(result_b.foo, { "handled_fail_b" }, "result b")
T.check(has(captured.nodes, "fail_a"), "fail_a handled")
T.check(has(captured.nodes, "fail_b"), "fail_b handled")
T.finish()
