-- langgraph: test_pregel.py::test_subgraph_checkpoint_true_interrupt
-- The durability parameter is a loop (a fresh MemorySaver each time).
-- `get_state(config, subgraphs=True)` is `get_state(config, { subgraphs = true })`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = durability .. ": "
  local sb = sst.StateGraph{ bar = sst.reducers.replace, baz = sst.reducers.replace }
  sb:add_node("subgraph_node_1", function() return { baz = sst.interrupt("Provide baz value") } end)
  sb:add_node("subgraph_node_2", function(state) return { bar = state.bar .. state.baz } end)
  sb:add_edge(sst.START, "subgraph_node_1")
  sb:add_edge("subgraph_node_1", "subgraph_node_2")
  local subgraph = sb:compile{ checkpointer = true }

  local builder = sst.StateGraph{ foo = sst.reducers.replace }
  builder:add_node("node_1", function(state) return { foo = "hi! " .. state.foo } end)
  builder:add_node("node_2", function(state)
    local response = subgraph:invoke({ bar = state.foo })
    return { foo = response.bar }
  end)
  builder:add_edge(sst.START, "node_1")
  builder:add_edge("node_1", "node_2")
  local graph = builder:compile{ checkpointer = sst.MemorySaver() }
  local config = lg.thread("1")

  local result = graph:invoke({ foo = "foo" }, config, { durability = durability })
  T.eq(lg.interrupt_values(result.__interrupt__), { "Provide baz value" }, what .. "interrupt")
  result.__interrupt__ = nil
  T.eq(result, { foo = "hi! foo" }, what .. "values")
  local state = graph:get_state(config, { subgraphs = true })
  T.eq(state.tasks[1].state.values, { bar = "hi! foo" }, what .. "subgraph state")
  T.eq(graph:invoke(sst.Command{ resume = "baz" }, config, { durability = durability }),
       { foo = "hi! foobaz" }, what .. "resumed")
end
T.finish()
