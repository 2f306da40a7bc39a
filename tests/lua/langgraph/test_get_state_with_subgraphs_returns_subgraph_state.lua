-- langgraph: test_time_travel.py::test_get_state_with_subgraphs_returns_subgraph_state
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sb = sst.StateGraph{ data = sst.reducers.replace }
sb:add_node("process", function()
  sst.interrupt("Continue?")
  return { data = "processed" }
end)
sb:add_edge(sst.START, "process")
local subgraph = sb:compile()

local g = sst.StateGraph{ data = sst.reducers.replace }
g:add_node("sub", subgraph)
g:add_edge(sst.START, "sub")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ data = "input" }, config)

local state = graph:get_state(config, { subgraphs = true })
T.check(#state.tasks > 0, "tasks")
local sub_task = state.tasks[1]
T.check(sub_task.state ~= nil, "task state")
local sub_config = sub_task.state.config
T.check(sub_config.configurable ~= nil, "configurable")
T.check(sub_config.configurable.thread_id ~= nil, "thread_id")
T.finish()
