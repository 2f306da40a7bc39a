-- langgraph: test_retry.py::test_set_node_defaults_error_handler_overridden_by_node_handler
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

local captured = { handler = {} }
local function node_handler(state, err)
  captured.handler[#captured.handler + 1] = "node:" .. err.node
  return { foo = { "node_handled_" .. err.node } }
end
local function default_handler(state, err)
  captured.handler[#captured.handler + 1] = "default:" .. err.node
  return { foo = { "default_handled_" .. err.node } }
end
local graph = build({ error_handler = default_handler }, { error_handler = node_handler })

local result_a = graph:invoke({ route = "fail_a", foo = sst.array{} })
T.eq(result_a.foo, { "node_handled_fail_a" }, "result a")
T.check(has(captured.handler, "node:fail_a"), "node:fail_a")
T.check(not has(captured.handler, "default:fail_a"), "not default:fail_a")

local result_b = graph:invoke({ route = "fail_b", foo = sst.array{} })
T.eq(result_b.foo, { "default_handled_fail_b" }, "result b")
T.check(has(captured.handler, "default:fail_b"), "default:fail_b")
T.finish()
