-- langgraph: test_time_travel.py::test_stateful_subgraph_retains_state_on_parent_fork
local sst = superstep
local T = require("checks")
local lg = require("lg")

local started, observed = {}, {}
-- sub: step_a (interrupt "question_a") -> step_b (interrupt "question_b")
local function step(name, question, prefix)
  return function(s)
    started[#started + 1] = { name, sst.to_table(s) }
    local answer = sst.interrupt(question)
    observed[#observed + 1] = { name, sst.to_table(s) }
    return { value = { prefix .. answer } }
  end
end
local sb = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
sb:add_node("step_a", step("step_a", "question_a", "a:"))
sb:add_node("step_b", step("step_b", "question_b", "b:"))
sb:add_edge(sst.START, "step_a")
sb:add_edge("step_a", "step_b")
local sub = sb:compile{ checkpointer = true }

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("parent_node", function() return { results = { "p" } } end)
g:add_node("sub_node", sub)
g:add_edge(sst.START, "parent_node")
g:add_edge("parent_node", "sub_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local E = sst.array{}
-- (Python appends to `observed` before the interrupt: `started` here.)

graph:invoke({ results = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "a1" }, config)
graph:invoke(sst.Command{ resume = "b1" }, config)
graph:invoke({ results = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "a2" }, config)
graph:invoke(sst.Command{ resume = "b2" }, config)

-- fork from before sub_node in the 2nd invocation
local before_sub_2nd
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["sub_node"]' then before_sub_2nd = s; break end
end
local fork_config = graph:update_state(before_sub_2nd.config, { results = { "forked" } })

started = {}
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")
T.eq(started[1], { "step_a", { value = { "a:a1", "b:b1" } } }, "fork sees the 1st invocation's final state")
T.finish()
