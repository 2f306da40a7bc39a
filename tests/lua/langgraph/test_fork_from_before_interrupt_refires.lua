-- langgraph: test_time_travel.py::test_fork_from_before_interrupt_refires
local sst = superstep
local T = require("checks")
local lg = require("lg")

local called = {}
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() called[#called + 1] = "node_a"; return { value = { "a" } } end)
g:add_node("ask_human", function()
  called[#called + 1] = "ask_human"
  local answer = sst.interrupt("What is your input?")
  return { value = { "human:" .. answer } }
end)
g:add_node("node_b", function() called[#called + 1] = "node_b"; return { value = { "b" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "ask_human")
g:add_edge("ask_human", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "hello" }, config)

local before_ask
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["ask_human"]' then before_ask = s end
end

called = {}
local fork_config = graph:update_state(before_ask.config, { value = { "forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")
T.eq(fork_result.__interrupt__[1].value, "What is your input?", "interrupt value")

-- resume the fork's interrupt with another answer
local final = graph:invoke(sst.Command{ resume = "world" }, fork_config)
T.eq(final, { value = { "a", "forked", "human:world", "b" } }, "final")
T.finish()
