-- langgraph: test_time_travel.py::test_checkpoint_ns_accessible_in_subgraph
local sst = superstep
local T = require("checks")
local lg = require("lg")

local captured_config = {}
local sb = sst.StateGraph{ data = sst.reducers.replace }
sb:add_node("inner", function(state, input, ctx)
  captured_config.checkpoint_ns = ctx.config.configurable.checkpoint_ns
  captured_config.thread_id = ctx.config.configurable.thread_id
  return { data = "done" }
end)
sb:add_edge(sst.START, "inner")
local subgraph = sb:compile()

local g = sst.StateGraph{ data = sst.reducers.replace }
g:add_node("outer", subgraph)
g:add_edge(sst.START, "outer")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ data = "test" }, config)

T.check(captured_config.checkpoint_ns ~= nil, "checkpoint_ns set")
T.check(captured_config.checkpoint_ns ~= "", "checkpoint_ns not empty")
T.eq(captured_config.thread_id, "1", "thread_id")
T.finish()
