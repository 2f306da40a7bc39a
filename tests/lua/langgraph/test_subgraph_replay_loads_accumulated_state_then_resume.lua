-- langgraph: test_time_travel.py::test_subgraph_replay_loads_accumulated_state_then_resume
local sst = superstep
local T = require("checks")
local lg = require("lg")

local started_state = {}
local sb = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
sb:add_node("step_a", function(s)
  started_state[#started_state + 1] = sst.to_table(s)
  local answer = sst.interrupt("question_a")
  return { value = { "a:" .. answer } }
end)
sb:add_edge(sst.START, "step_a")
local subgraph = sb:compile{ checkpointer = true }

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("parent_node", function() return { results = { "p" } } end)
g:add_node("sub_node", subgraph)
g:add_edge(sst.START, "parent_node")
g:add_edge("parent_node", "sub_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local E = sst.array{}
local function nexts(h) local o = {} for i, s in ipairs(h) do o[i] = s.next end return o end
local function sources(h) local o = {} for i, s in ipairs(h) do o[i] = s.metadata.source end return o end

-- 1st invocation, answered "a1"
graph:invoke({ results = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "a1" }, config)
T.eq(started_state[1], { value = E }, "1st: a fresh subgraph")

-- 2nd invocation, answered "a2"
started_state = {}
graph:invoke({ results = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "a2" }, config)
T.eq(started_state[1], { value = { "a:a1" } }, "2nd: the subgraph kept its state")

local original_history = graph:get_state_history(config)
T.eq(nexts(original_history), {
  E, { "sub_node" }, { "parent_node" }, { "__start__" },
  E, { "sub_node" }, { "parent_node" }, { "__start__" },
}, "original next")

-- replay from before sub_node in the 2nd invocation (the newest match)
local before_sub_2nd
for _, s in ipairs(original_history) do
  if sst.json_encode(s.next) == '["sub_node"]' then before_sub_2nd = s; break end
end
started_state = {}
local replay = graph:invoke(nil, before_sub_2nd.config)
T.check(replay.__interrupt__ ~= nil, "replay interrupted")
T.eq(started_state[1], { value = { "a:a1" } }, "replay: the state at the end of the 1st invocation")

local post_replay_history = graph:get_state_history(config)
T.eq(nexts(post_replay_history), {
  { "sub_node" },
  E, { "sub_node" }, { "parent_node" }, { "__start__" },
  E, { "sub_node" }, { "parent_node" }, { "__start__" },
}, "next after the replay")
T.eq(sources(post_replay_history),
     { "fork", "loop", "loop", "loop", "input", "loop", "loop", "loop", "input" }, "sources after the replay")

started_state = {}
local final = graph:invoke(sst.Command{ resume = "a3" }, config)
T.check(final.__interrupt__ == nil, "not interrupted")
T.eq(final.results, { "p", "p" }, "results")

local final_history = graph:get_state_history(config)
T.eq(nexts(final_history), {
  E, { "sub_node" },
  E, { "sub_node" }, { "parent_node" }, { "__start__" },
  E, { "sub_node" }, { "parent_node" }, { "__start__" },
}, "final next")
T.eq(sources(final_history),
     { "loop", "fork", "loop", "loop", "loop", "input", "loop", "loop", "loop", "input" }, "final sources")
T.finish()
