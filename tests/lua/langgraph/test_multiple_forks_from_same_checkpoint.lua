-- langgraph: test_time_travel.py::test_multiple_forks_from_same_checkpoint
local sst = superstep
local T = require("checks")
local lg = require("lg")

local has = lg.has

local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() return { value = { "a" } } end)
g:add_node("node_b", function() return { value = { "b" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ value = sst.array{} }, config)

local before_b
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["node_b"]' then before_b = s; break end
end

local fork1_config = graph:update_state(before_b.config, { value = { "fork1" } })
local result1 = graph:invoke(nil, fork1_config)

local fork2_config = graph:update_state(before_b.config, { value = { "fork2" } })
local result2 = graph:invoke(nil, fork2_config)

T.check(has(result1.value, "fork1"), "fork1 in result1")
T.check(not has(result1.value, "fork2"), "fork2 not in result1")
T.check(has(result2.value, "fork2"), "fork2 in result2")
T.check(not has(result2.value, "fork1"), "fork1 not in result2")
T.finish()
