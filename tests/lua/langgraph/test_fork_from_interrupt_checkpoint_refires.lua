-- langgraph: test_time_travel.py::test_fork_from_interrupt_checkpoint_refires
local sst = superstep
local T = require("checks")
local lg = require("lg")

local has = lg.has

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

-- the checkpoint where the interrupt fired: next == ("ask_human",) and a
-- task with interrupts
local interrupt_checkpoint
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["ask_human"]' and s.tasks then
    local any = false
    for _, t in ipairs(s.tasks) do any = any or (t.interrupts ~= nil and #t.interrupts > 0) end
    if any then interrupt_checkpoint = s; break end
  end
end
T.check(interrupt_checkpoint ~= nil, "a checkpoint has a task with interrupts")

local fork_config = graph:update_state(interrupt_checkpoint.config, { value = { "forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")

local final = graph:invoke(sst.Command{ resume = "different" }, fork_config)
T.check(has(final.value, "human:different"), "human:different in the final value")
T.finish()
