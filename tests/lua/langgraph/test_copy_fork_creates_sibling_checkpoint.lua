-- langgraph: test_time_travel.py::test_copy_fork_creates_sibling_checkpoint
local sst = superstep
local T = require("checks")
local lg = require("lg")

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

-- a __copy__ fork has source "fork"
local copy_config = graph:update_state(before_b.config, nil, "__copy__")
local copy_state = graph:get_state(copy_config)
T.eq(copy_state.metadata.source, "fork", "__copy__ source")

-- a plain update has source "update"
local regular_config = graph:update_state(before_b.config, { value = { "x" } })
local regular_state = graph:get_state(regular_config)
T.eq(regular_state.metadata.source, "update", "update source")
T.finish()
