-- langgraph: test_pregel.py::test_checkpoint_recovery
-- The durability parameter is a loop (a fresh MemorySaver each time).
-- Python's error text "RuntimeError('Simulated failure')" is the Lua error
-- message "Simulated failure". `checkpointer.get_tuple(config) is None` is
-- checked as an empty history.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = durability .. ": "
  local builder = sst.StateGraph{
    steps = { reducer = sst.reducers.append, default = sst.array{} },
    attempt = sst.reducers.replace,
  }
  builder:add_node("node1", function(state)
    if state.attempt == 1 then error("Simulated failure") end
    return { steps = { "node1" } }
  end)
  builder:add_node("node2", function() return { steps = { "node2" } } end)
  builder:add_edge(sst.START, "node1")
  builder:add_edge("node1", "node2")
  local saver = sst.MemorySaver()
  local graph = builder:compile{ checkpointer = saver }
  local config = lg.thread("1")

  lg.raises(function()
    graph:invoke({ steps = { "start" }, attempt = 1 }, config, { durability = durability })
  end, "NodeError", "Simulated failure", what .. "first attempt")

  local state = graph:get_state(config)
  T.check(state ~= nil, what .. "state")
  T.eq(state.values, { steps = { "start" }, attempt = 1 }, what .. "input state saved")
  T.eq(state.next, { "node1" }, what .. "next")
  local err = state.tasks and state.tasks[1] and state.tasks[1].error
  T.check(type(err) == "string" and err:find("Simulated failure", 1, true) ~= nil,
          what .. "tasks[1].error: " .. tostring(err))

  local result = graph:invoke({ steps = sst.array{}, attempt = 2 }, config, { durability = durability })
  T.eq(result, { steps = { "start", "node1", "node2" }, attempt = 2 }, what .. "retry")

  local history = graph:get_state_history(config)
  if durability ~= "exit" then
    T.eq(#history, 6, what .. "history length")
  else
    T.eq(#history, 2, what .. "history length")
  end
  local failed
  for _, c in ipairs(history) do
    if c.tasks and c.tasks[1] and c.tasks[1].error then failed = c; break end
  end
  T.check(failed ~= nil and tostring(failed.tasks[1].error):find("Simulated failure", 1, true) ~= nil,
          what .. "failed checkpoint records the error")

  saver:delete_thread(config.configurable.thread_id)
  T.eq(graph:get_state_history(config), sst.array{}, what .. "history after delete_thread")
end
T.finish()
