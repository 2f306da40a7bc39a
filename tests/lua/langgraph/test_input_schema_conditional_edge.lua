-- langgraph: test_state.py::test_input_schema_conditional_edge
-- Python narrows each function's input by its type hint (node_2 reads the
-- private channel `baz`, the router sees only OverallState's keys). Lua has
-- no type hints: the private channel is a field left out of the graph's
-- input and output schemas (OverallState's keys), and the router's
-- `state == {"foo": 2, "bar": "bar"}` is checked on the keys OverallState has.
local sst = superstep
local T = require("checks")

local g = sst.StateGraph({
  foo = { reducer = sst.reducers.sum, default = 0 },
  bar = sst.reducers.replace,
  baz = sst.reducers.replace,
}, { input_schema = { "foo", "bar" }, output_schema = { "foo", "bar" } })

g:add_node("node_1", function(s) return { foo = 1, baz = "bar" } end)
g:add_node("node_2", function(s) return { foo = 1, bar = s.baz, something_else = "meow" } end)
g:add_node("node_3", function(s) return { foo = 1 } end)
g:add_conditional_edges("node_2", function(s)
  T.eq({ foo = s.foo, bar = s.bar }, { foo = 2, bar = "bar" }, "router state")
  if s.foo == 2 then return "node_3" end
  return "__end__"
end)
g:add_edge("__start__", "node_1")
g:add_edge("node_1", "node_2")
local app = g:compile()
T.eq(app:invoke({ foo = 0 }), { foo = 3, bar = "bar" }, "invoke")
T.finish()
