-- langgraph: test_pregel.py::test_multiple_updates
-- A node returns a list of Commands, as in Python.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = { reducer = function(a, b) return a .. b end, default = "" } }
g:add_sequence{
  { "node_a", function()
      return { sst.Command{ update = { foo = "a1" } }, sst.Command{ update = { foo = "a2" } } }
    end },
  { "node_b", function() return { foo = "b" } end },
}
g:add_edge(sst.START, "node_a")
local graph = g:compile()

T.eq(graph:invoke({ foo = "" }), { foo = "a1a2b" }, "invoke")
T.eq(lg.collect(graph:stream({ foo = "" }, nil, "updates")), {
  { node_a = { { foo = "a1" }, { foo = "a2" } } },
  { node_b = { foo = "b" } },
}, "updates")
T.finish()
