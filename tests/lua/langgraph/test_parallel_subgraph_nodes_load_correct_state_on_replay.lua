-- langgraph: test_time_travel.py::test_parallel_subgraph_nodes_load_correct_state_on_replay
local sst = superstep
local T = require("checks")
local lg = require("lg")

local observed = {}
local function sub(field, name, item)
  local b = sst.StateGraph{ [field] = { reducer = sst.reducers.append, default = sst.array{} } }
  b:add_node(name .. "_step", function(s)
    observed[#observed + 1] = { name, sst.to_table(s) }
    return { [field] = { item } }
  end)
  b:add_edge(sst.START, name .. "_step")
  return b:compile{ checkpointer = true }
end
local sub_a = sub("a_trail", "sub_a", "a")
local sub_b = sub("b_trail", "sub_b", "b")

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("parent_step", function() return { results = { "p" } } end)
g:add_node("sub_a_node", sub_a)
g:add_node("sub_b_node", sub_b)
g:add_edge(sst.START, "parent_step")
-- fan out: both subgraphs run in parallel after parent_step
g:add_edge("parent_step", "sub_a_node")
g:add_edge("parent_step", "sub_b_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local function first(name)
  for _, o in ipairs(observed) do if o[1] == name then return o end end
end
local config = lg.thread("1")
local E = sst.array{}

graph:invoke({ results = sst.array{} }, config)
T.eq(first("sub_a"), { "sub_a", { a_trail = E } }, "1st a")
T.eq(first("sub_b"), { "sub_b", { b_trail = E } }, "1st b")

observed = {}
graph:invoke({ results = sst.array{} }, config)
T.eq(first("sub_a"), { "sub_a", { a_trail = { "a" } } }, "2nd a")
T.eq(first("sub_b"), { "sub_b", { b_trail = { "b" } } }, "2nd b")

local before_parent_2nd
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["parent_step"]' then before_parent_2nd = s; break end
end
observed = {}
graph:invoke(nil, before_parent_2nd.config)
T.eq(first("sub_a"), { "sub_a", { a_trail = { "a" } } }, "replay a")
T.eq(first("sub_b"), { "sub_b", { b_trail = { "b" } } }, "replay b")

observed = {}
graph:invoke({ results = sst.array{} }, config)
T.eq(first("sub_a"), { "sub_a", { a_trail = { "a", "a" } } }, "3rd a")
T.eq(first("sub_b"), { "sub_b", { b_trail = { "b", "b" } } }, "3rd b")
T.finish()
