-- langgraph: test_time_travel.py::test_stateful_subgraph_loads_latest_after_replay
local sst = superstep
local T = require("checks")
local lg = require("lg")

local observed = {}
local sb = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
sb:add_node("sub_step", function(s)
  observed[#observed + 1] = { "sub_step", sst.to_table(s) }
  return { value = { "s" } }
end)
sb:add_edge(sst.START, "sub_step")
local sub = sb:compile{ checkpointer = true }

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("parent_node", function() return { results = { "p" } } end)
g:add_node("sub_node", sub)
g:add_edge(sst.START, "parent_node")
g:add_edge("parent_node", "sub_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ results = sst.array{} }, config)
T.eq(observed[#observed], { "sub_step", { value = sst.array{} } }, "1st")
graph:invoke({ results = sst.array{} }, config)
T.eq(observed[#observed], { "sub_step", { value = { "s" } } }, "2nd")

-- replay from before parent_node in the 2nd invocation
local before_parent_2nd
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["parent_node"]' then before_parent_2nd = s; break end
end
observed = {}
graph:invoke(nil, before_parent_2nd.config)
T.eq(observed[1], { "sub_step", { value = { "s" } } }, "replay loads the state after the 1st")

-- a 3rd invocation sees the replay's state
observed = {}
graph:invoke({ results = sst.array{} }, config)
T.eq(observed[1], { "sub_step", { value = { "s", "s" } } }, "3rd")
T.finish()
