-- langgraph: test_time_travel.py::test_multiple_interrupts_in_one_node
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("ask", function()
  local answer1 = sst.interrupt("First question?")
  local answer2 = sst.interrupt("Second question?")
  return { value = { "a1:" .. answer1, "a2:" .. answer2 } }
end)
g:add_node("after", function() return { value = { "done" } } end)
g:add_edge(sst.START, "ask")
g:add_edge("ask", "after")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")

-- first interrupt
local result = graph:invoke({ value = sst.array{} }, config)
T.eq(result.__interrupt__[1].value, "First question?", "first")

-- resume the first (on the head checkpoint's config): the second fires
local interrupt_state = graph:get_state(config)
result = graph:invoke(sst.Command{ resume = "ans1" }, interrupt_state.config)
T.eq(result.__interrupt__[1].value, "Second question?", "second")

-- resume the second: done
local interrupt_state2 = graph:get_state(config)
result = graph:invoke(sst.Command{ resume = "ans2" }, interrupt_state2.config)
T.eq(result, { value = { "a1:ans1", "a2:ans2", "done" } }, "done")

-- replay from before the node: the first interrupt fires again
local before_ask
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["ask"]' then before_ask = s end
end
local replay_result = graph:invoke(nil, before_ask.config)
T.eq(replay_result.__interrupt__[1].value, "First question?", "replay")
T.finish()
