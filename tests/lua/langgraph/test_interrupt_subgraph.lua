-- langgraph: test_pregel.py::test_interrupt_subgraph
local sst = superstep
local T = require("checks")
local lg = require("lg")

local child_builder = sst.StateGraph{ baz = sst.reducers.replace }
child_builder:add_node("bar", function() return { baz = sst.interrupt("Please provide baz value:") } end)
child_builder:add_edge(sst.START, "bar")

local builder = sst.StateGraph{ baz = sst.reducers.replace }
builder:add_node("foo", function() return { baz = "foo" } end)
builder:add_node("bar", child_builder:compile())
builder:add_edge(sst.START, "foo")
builder:add_edge("foo", "bar")
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local thread1 = lg.thread("1")
-- Python asserts the results are truthy (non-empty dicts)
T.check(next(graph:invoke({ baz = "" }, thread1)) ~= nil, "first run")
T.check(next(graph:invoke(sst.Command{ resume = "bar" }, thread1)) ~= nil, "resumed")
T.finish()
