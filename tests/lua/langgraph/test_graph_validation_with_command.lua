-- langgraph: test_pregel.py::test_graph_validation_with_command
local sst = superstep
local T = require("checks")

local builder = sst.StateGraph{ foo = sst.reducers.replace, bar = sst.reducers.replace }
builder:add_node("a", function() return sst.Command{ ["goto"] = "b", update = { foo = "bar" } } end)
builder:add_node("b", function() return sst.Command{ ["goto"] = sst.END, update = { bar = "baz" } } end)
builder:add_edge(sst.START, "a")
local graph = builder:compile()
T.eq(graph:invoke({ foo = "" }), { foo = "bar", bar = "baz" }, "invoke")
T.finish()
