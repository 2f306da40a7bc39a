-- langgraph: test_pregel.py::test_graph_validation
-- `hello: str` written by two nodes in one step is `sst.reducers.unique`
-- (README); a reducer taking one argument stands for Python's bad_reducer(a).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local graph = sst.StateGraph{ hello = sst.reducers.unique }
graph:add_node("start", function(x) return x end)
graph:add_edge("__start__", "start")
graph:add_edge("unknown", "start")
graph:add_edge("start", "__end__")
lg.raises(function() graph:compile() end, "ValueError", "'unknown'", "edge from unknown node")

lg.raises(function() sst.StateGraph{ hello = function(a) end } end, "ValueError", "Invalid reducer",
          "bad reducer")

local function node_b() return { hello = "world" } end
local builder = sst.StateGraph{ hello = sst.reducers.unique }
builder:add_node("a", node_b)
builder:add_node("b", node_b)
builder:add_node("c", node_b)
builder:set_entry_point("a")
builder:add_edge("a", "b")
builder:add_edge("a", "c")
local app = builder:compile()
lg.raises(function() app:invoke({ hello = "there" }) end, "InvalidUpdateError", "'hello'", "two writers")
T.finish()
