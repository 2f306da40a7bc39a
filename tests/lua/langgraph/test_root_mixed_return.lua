-- langgraph: test_pregel.py::test_root_mixed_return
-- The Python state schema is the list itself (a root channel with
-- operator.add); here it is the one field `value` (the README maps only
-- dict-shaped states). A node returns a list mixing a Command and an
-- update, as in Python.
local sst = superstep
local T = require("checks")

local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("my_node", function()
  return { sst.Command{ update = { value = { "a" } } }, { value = { "b" } } }
end)
g:add_edge(sst.START, "my_node")
local graph = g:compile()
T.eq(graph:invoke({ value = sst.array{} }), { value = { "a", "b" } }, "invoke")
T.finish()
