-- langgraph: test_pregel.py::test_bulk_state_updates
-- `len(list(checkpointer.list(config)))` is the length of the thread's history.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = sst.reducers.replace, baz = sst.reducers.replace }
g:add_node("node_a", function() return { foo = "bar" } end)
g:add_node("node_b", function() return { baz = "qux" } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
-- First update with node_a
graph:bulk_update_state(config, { { { values = { foo = "bar" }, as_node = "node_a" } } })
-- Then bulk update with both nodes
graph:bulk_update_state(config, { {
  { values = { foo = "updated" }, as_node = "node_a" },
  { values = { baz = "new" }, as_node = "node_b" },
} })
T.eq(graph:get_state(config).values, { foo = "updated", baz = "new" }, "thread 1 values")
T.eq(#graph:get_state_history(config), 2, "thread 1: two checkpoints")

-- perform multiple steps at the same time
config = lg.thread("2")
graph:bulk_update_state(config, {
  { { values = { foo = "bar" }, as_node = "node_a" } },
  { { values = { foo = "updated" }, as_node = "node_a" }, { values = { baz = "new" }, as_node = "node_b" } },
})
T.eq(graph:get_state(config).values, { foo = "updated", baz = "new" }, "thread 2 values")
T.eq(#graph:get_state_history(config), 2, "thread 2: two checkpoints")

-- Should raise error if updating without as_node
lg.raises(function()
  graph:bulk_update_state(config, { { { values = { foo = "error" } }, { values = { bar = "error" } } } })
end, "InvalidUpdateError", nil, "no as_node")
-- Should raise if no updates are provided
lg.raises(function() graph:bulk_update_state(config, {}) end,
          "ValueError", "No supersteps provided", "no supersteps")
lg.raises(function() graph:bulk_update_state(config, { {}, {} }) end,
          "ValueError", "No updates provided", "no updates")
-- Should raise if __end__ or __copy__ update is applied in bulk
lg.raises(function()
  graph:bulk_update_state(config, { { { as_node = "__end__" }, { as_node = "__copy__" } } })
end, "InvalidUpdateError", nil, "__end__/__copy__ in bulk")
T.finish()
