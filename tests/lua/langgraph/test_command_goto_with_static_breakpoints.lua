-- langgraph: test_pregel.py::test_command_goto_with_static_breakpoints
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{ foo = { reducer = function(a, b) return a .. b end, default = "" } }
builder:add_node("node1", function() return { foo = "|node-1" } end)
builder:add_node("node2", function() return { foo = "|node-2" } end)
builder:add_edge(sst.START, "node1")
builder:add_edge("node1", "node2")
local graph = builder:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "node1" } }
local config = lg.thread("5b1c7a2e-goto-static-breakpoints")

graph:invoke({ foo = "abc" }, config)
local result = graph:invoke(sst.Command{ ["goto"] = { "node2" } }, config)
T.eq(result, { foo = "abc|node-1|node-2|node-2" }, "goto on resume")
T.finish()
