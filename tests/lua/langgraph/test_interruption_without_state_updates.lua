-- langgraph: test_interruption.py::test_interruption_without_state_updates
-- Parametrized on durability: one loop, a fresh MemorySaver per mode.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs{ "sync", "async", "exit" } do
  local g = sst.StateGraph{ input = sst.reducers.replace }
  local function noop() end
  g:add_node("step_1", noop)
  g:add_node("step_2", noop)
  g:add_node("step_3", noop)
  g:add_edge(sst.START, "step_1")
  g:add_edge("step_1", "step_2")
  g:add_edge("step_2", "step_3")
  g:add_edge("step_3", sst.END)
  local graph = g:compile{ checkpointer = sst.MemorySaver(), interrupt_after = "*" }

  local thread = lg.thread("1")
  local exit = durability == "exit"
  local d = " (" .. durability .. ")"

  graph:invoke({ input = "hello world" }, thread, { durability = durability })
  T.eq(graph:get_state(thread).next, { "step_2" }, "next 1" .. d)
  T.eq(#graph:get_state_history(thread), exit and 1 or 3, "checkpoints 1" .. d)

  graph:invoke(nil, thread, { durability = durability })
  T.eq(graph:get_state(thread).next, { "step_3" }, "next 2" .. d)
  T.eq(#graph:get_state_history(thread), exit and 2 or 4, "checkpoints 2" .. d)

  graph:invoke(nil, thread, { durability = durability })
  T.eq(graph:get_state(thread).next, sst.array{}, "next 3" .. d)
  T.eq(#graph:get_state_history(thread), exit and 3 or 5, "checkpoints 3" .. d)
end
T.finish()
