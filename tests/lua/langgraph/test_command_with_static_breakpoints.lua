-- langgraph: test_pregel.py::test_command_with_static_breakpoints
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{ foo = sst.reducers.replace }
builder:add_node("node1", function(state) return { foo = state.foo .. "|node-1" } end)
builder:add_node("node2", function(state) return { foo = state.foo .. "|node-2" } end)
builder:add_edge(sst.START, "node1")
builder:add_edge("node1", "node2")
local graph = builder:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "node1" } }
local config = lg.thread("a4a52f7c-static-breakpoints")

graph:invoke({ foo = "abc" }, config)
local result = graph:invoke(sst.Command{ resume = "node1" }, config)
T.eq(result, { foo = "abc|node-1|node-2" }, "resumed")
T.finish()
