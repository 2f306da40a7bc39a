-- langgraph: test_pregel.py::test_dict_mixed_return
-- A node returns a list mixing a Command and an update, as in Python.
local sst = superstep
local T = require("checks")

local g = sst.StateGraph{ foo = { reducer = function(a, b) return a .. b end, default = "" } }
g:add_node("my_node", function()
  return { sst.Command{ update = { foo = "a" } }, { foo = "b" } }
end)
g:add_edge(sst.START, "my_node")
local graph = g:compile()
T.eq(graph:invoke({ foo = "" }), { foo = "ab" }, "invoke")
T.finish()
