-- langgraph: test_time_travel.py::test_three_level_nested_subgraph_loads_state_on_fork
local sst = superstep
local T = require("checks")
local lg = require("lg")

local observed = {}
local ib = sst.StateGraph{ inner_trail = { reducer = sst.reducers.append, default = sst.array{} } }
ib:add_node("inner_step", function(s)
  observed[#observed + 1] = { "inner_step", sst.to_table(s) }
  return { inner_trail = { "inner" } }
end)
ib:add_edge(sst.START, "inner_step")
local inner = ib:compile{ checkpointer = true }

local mb = sst.StateGraph{ mid_trail = { reducer = sst.reducers.append, default = sst.array{} } }
mb:add_node("mid_step", function(s)
  observed[#observed + 1] = { "mid_step", sst.to_table(s) }
  return { mid_trail = { "mid" } }
end)
mb:add_node("inner_node", inner)
mb:add_edge(sst.START, "mid_step")
mb:add_edge("mid_step", "inner_node")
local mid = mb:compile{ checkpointer = true }

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("parent_step", function() return { results = { "p" } } end)
g:add_node("mid_node", mid)
g:add_edge(sst.START, "parent_step")
g:add_edge("parent_step", "mid_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local E = sst.array{}

graph:invoke({ results = sst.array{} }, config)
graph:invoke({ results = sst.array{} }, config)

local before_parent_2nd
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["parent_step"]' then before_parent_2nd = s; break end
end
local fork_config = graph:update_state(before_parent_2nd.config, { results = { "forked" } })
observed = {}
graph:invoke(nil, fork_config)
T.eq(observed, { { "mid_step", { mid_trail = { "mid" } } }, { "inner_step", { inner_trail = { "inner" } } } }, "fork")
T.finish()
