-- langgraph: test_time_travel.py::test_replay_from_first_invocation_checkpoint
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
-- two runs, so that the subgraph has state
graph:invoke({ results = sst.array{} }, config)
graph:invoke({ results = sst.array{} }, config)

-- replay from before sub_node in the 1st invocation (the oldest match)
local before_sub_1st
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["sub_node"]' then before_sub_1st = s end
end
observed = {}
graph:invoke(nil, before_sub_1st.config)
-- no earlier subgraph checkpoint: an empty state
T.eq(observed[1], { "sub_step", { value = sst.array{} } }, "replay")
T.finish()
