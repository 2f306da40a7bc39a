-- langgraph: test_pregel.py::test_multiple_updates_root
-- The Python state schema is the string itself (a root channel with
-- operator.add); here it is the one field `value` (the README maps only
-- dict-shaped states). A node returns a list of Commands, as in Python.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ value = { reducer = function(a, b) return a .. b end, default = "" } }
g:add_sequence{
  { "node_a", function()
      return { sst.Command{ update = { value = "a1" } }, sst.Command{ update = { value = "a2" } } }
    end },
  { "node_b", function() return { value = "b" } end },
}
g:add_edge(sst.START, "node_a")
local graph = g:compile()

T.eq(graph:invoke({ value = "" }), { value = "a1a2b" }, "invoke")
T.eq(lg.collect(graph:stream({ value = "" }, nil, "updates")), {
  { node_a = { { value = "a1" }, { value = "a2" } } },
  { node_b = { value = "b" } },
}, "updates")
T.finish()
