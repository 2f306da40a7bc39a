-- langgraph: test_time_travel.py::test_fork_reruns_with_modified_state
local sst = superstep
local T = require("checks")
local lg = require("lg")

local has = lg.has

local called = {}
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() called[#called + 1] = "node_a"; return { value = { "a" } } end)
g:add_node("node_b", function() called[#called + 1] = "node_b"; return { value = { "b" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ value = sst.array{} }, config)

local before_b
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["node_b"]' then before_b = s; break end
end

called = {}
local fork_config = graph:update_state(before_b.config, { value = { "x" } })
local fork_result = graph:invoke(nil, fork_config)

T.check(has(called, "node_b"), "node_b re-ran")
T.eq(fork_result, { value = { "a", "x", "b" } }, "fork result")
T.finish()
