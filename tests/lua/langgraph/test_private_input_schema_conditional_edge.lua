-- langgraph: test_state.py::test_private_input_schema_conditional_edge
-- Python narrows each function's input by its type hint (the router sees only
-- RouterState's `baz`). Lua has no type hints: the private channel `baz` is a
-- field left out of the graph's input and output schemas (OverallState's
-- keys), and the router's `state == {"baz": "meow"}` is checked on `baz`.
local sst = superstep
local T = require("checks")

local g = sst.StateGraph({
  foo = { reducer = sst.reducers.sum, default = 0 },
  bar = sst.reducers.replace,
  baz = sst.reducers.replace,
}, { input_schema = { "foo", "bar" }, output_schema = { "foo", "bar" } })

g:add_node("node_1", function(s) return { foo = 1, baz = "meow" } end)
g:add_node("node_2", function(s) return { foo = 1, bar = s.baz } end)
g:add_conditional_edges("node_1", function(s)
  T.eq({ baz = s.baz }, { baz = "meow" }, "router state")
  if s.baz == "meow" then return "node_2" end
  return "__end__"
end)
g:add_edge("__start__", "node_1")
local app = g:compile()
T.eq(app:invoke({ foo = 0 }), { foo = 2, bar = "meow" }, "invoke")
T.finish()
