-- langgraph: test_time_travel.py::test_replay_interrupt_stable_across_replays
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() return { value = { "a" } } end)
g:add_node("ask_human", function()
  local answer = sst.interrupt("What is your input?")
  return { value = { "human:" .. answer } }
end)
g:add_node("node_b", function() return { value = { "b" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "ask_human")
g:add_edge("ask_human", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "cached_answer" }, config)

local before_ask
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["ask_human"]' then before_ask = s end
end

local results = {}
for i = 1, 3 do results[i] = graph:invoke(nil, before_ask.config) end

-- each replay makes a fork with its own interrupt id: compare the values
for i, r in ipairs(results) do
  T.check(r.__interrupt__ ~= nil, "replay " .. i .. " interrupted")
  T.eq(r.__interrupt__[1].value, results[1].__interrupt__[1].value, "replay " .. i .. " interrupt value")
  T.eq(r.value, results[1].value, "replay " .. i .. " value")
end
T.finish()
