-- langgraph: test_time_travel.py::test_sequential_interrupts_fork_from_middle
local sst = superstep
local T = require("checks")
local lg = require("lg")

local has = lg.has

local called = {}
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() called[#called + 1] = "node_a"; return { value = { "a" } } end)
g:add_node("interrupt_1", function()
  called[#called + 1] = "interrupt_1"
  local answer = sst.interrupt("First question?")
  return { value = { "i1:" .. answer } }
end)
g:add_node("interrupt_2", function()
  called[#called + 1] = "interrupt_2"
  local answer = sst.interrupt("Second question?")
  return { value = { "i2:" .. answer } }
end)
g:add_node("node_b", function() called[#called + 1] = "node_b"; return { value = { "b" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "interrupt_1")
g:add_edge("interrupt_1", "interrupt_2")
g:add_edge("interrupt_2", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")

-- first interrupt
local r1 = graph:invoke({ value = sst.array{} }, config)
T.eq(r1.__interrupt__[1].value, "First question?", "r1")
-- resume the first: the second fires
local r2 = graph:invoke(sst.Command{ resume = "ans1" }, config)
T.eq(r2.__interrupt__[1].value, "Second question?", "r2")
-- resume the second: done
local r3 = graph:invoke(sst.Command{ resume = "ans2" }, config)
T.eq(r3, { value = { "a", "i1:ans1", "i2:ans2", "b" } }, "r3")

local history = graph:get_state_history(config)
local function last_with_next(name)
  local found
  for _, s in ipairs(history) do
    if sst.json_encode(s.next) == sst.json_encode({ name }) then found = s end
  end
  return found
end

-- fork between the two interrupts: only the second fires again
local between = last_with_next("interrupt_2")
local fork_config = graph:update_state(between.config, { value = { "mid_fork" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")
T.eq(fork_result.__interrupt__[1].value, "Second question?", "fork interrupt")

-- resume with a new answer; the first answer is kept
local final_result = graph:invoke(sst.Command{ resume = "new_b" }, fork_config)
T.check(has(final_result.value, "i2:new_b"), "i2:new_b in the final value")
T.check(has(final_result.value, "i1:ans1"), "i1:ans1 in the final value")

-- replay from before the first interrupt: the first fires, the second does not run
local before_i1 = last_with_next("interrupt_1")
called = {}
local replay_result = graph:invoke(nil, before_i1.config)
T.check(replay_result.__interrupt__ ~= nil, "replay interrupted")
T.eq(replay_result.__interrupt__[1].value, "First question?", "replay interrupt")
T.check(has(called, "interrupt_1"), "interrupt_1 ran")
T.check(not has(called, "interrupt_2"), "interrupt_2 did not run")
T.finish()
