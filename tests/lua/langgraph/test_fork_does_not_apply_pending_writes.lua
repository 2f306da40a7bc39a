-- langgraph: test_pregel.py::test_fork_does_not_apply_pending_writes
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ value = { reducer = sst.reducers.sum, default = 0 } }
g:add_node("node_a", function() return { value = 10 } end)
g:add_node("node_b", function() return { value = 100 } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local thread1 = lg.thread("1")
graph:invoke({ value = 1 }, thread1)

local checkpoint_before_a
for _, s in ipairs(graph:get_state_history(thread1)) do
  if sst.json_encode(s.next) == sst.json_encode({ "node_a" }) then checkpoint_before_a = s break end
end
T.check(checkpoint_before_a ~= nil, "a checkpoint with next == {'node_a'}")

local fork_config = graph:update_state(checkpoint_before_a.config, { value = 20 }, "node_a")
-- Continue from fork (should run node_b)
-- Should be: 1 (input) + 20 (forked node_a) + 100 (node_b) = 121
T.eq(graph:invoke(nil, fork_config), { value = 121 }, "fork result")
T.finish()
