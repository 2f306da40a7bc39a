-- langgraph: test_time_travel.py::test_replay_from_before_interrupt_refires
local sst = superstep
local T = require("checks")
local lg = require("lg")

local call_count = { node_a = 0, ask_human = 0, node_b = 0 }
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function()
  call_count.node_a = call_count.node_a + 1
  return { value = { "a" } }
end)
g:add_node("ask_human", function()
  call_count.ask_human = call_count.ask_human + 1
  local answer = sst.interrupt("What is your input?")
  return { value = { "human:" .. answer } }
end)
g:add_node("node_b", function()
  call_count.node_b = call_count.node_b + 1
  return { value = { "b" } }
end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "ask_human")
g:add_edge("ask_human", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")

-- run until the interrupt
local result = graph:invoke({ value = sst.array{} }, config)
T.check(result.__interrupt__ ~= nil, "interrupted")
T.eq(call_count.ask_human, 1, "ask_human calls")

-- resume
result = graph:invoke(sst.Command{ resume = "hello" }, config)
T.eq(result, { value = { "a", "human:hello", "b" } }, "resumed")
T.eq(call_count.ask_human, 2, "ask_human re-runs on resume")

-- the last (oldest) checkpoint before ask_human
local before_ask
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["ask_human"]' then before_ask = s end
end

-- replay: the interrupt fires again, the node runs again
local replay_result = graph:invoke(nil, before_ask.config)
T.check(replay_result.__interrupt__ ~= nil, "replay interrupted")
T.eq(replay_result.__interrupt__[1].value, "What is your input?", "interrupt value")
T.eq(replay_result.value, { "a" }, "replay value")
T.eq(call_count.ask_human, 3, "ask_human re-ran")
T.eq(call_count.node_a, 1, "node_a not re-run (before the checkpoint)")
T.eq(call_count.node_b, 1, "node_b not re-run (after the interrupt)")
T.finish()
