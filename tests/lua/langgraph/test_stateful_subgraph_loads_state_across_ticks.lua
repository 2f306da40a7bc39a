-- langgraph: test_time_travel.py::test_stateful_subgraph_loads_state_across_ticks
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
g:add_node("node_a", function() return { results = { "a" } } end)
g:add_node("node_b", function() return { results = { "b" } } end)
g:add_node("sub_node", sub)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "node_b")
g:add_edge("node_b", "sub_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ results = sst.array{} }, config)
T.eq(observed[1], { "sub_step", { value = sst.array{} } }, "1st")

observed = {}
graph:invoke({ results = sst.array{} }, config)
T.eq(observed[1], { "sub_step", { value = { "s" } } }, "2nd")

-- replay from before node_a in the 2nd invocation
local before_a_2nd
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["node_a"]' then before_a_2nd = s; break end
end
observed = {}
graph:invoke(nil, before_a_2nd.config)
-- sub_node runs in a later step and sees the state after the 1st run
T.eq(observed[1], { "sub_step", { value = { "s" } } }, "replay")
T.finish()
