-- langgraph: test_time_travel.py::test_subgraph_time_travel_checkpoint_pattern
local sst = superstep
local T = require("checks")
local lg = require("lg")

local has = lg.has
local function state() return sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } } end
local called = {}
local function node(name, value)
  return function() called[#called + 1] = name; return { value = { value } } end
end
local function asker(name, question, prefix)
  return function()
    called[#called + 1] = name
    local answer = sst.interrupt(question)
    return { value = { prefix .. answer } }
  end
end
local E = sst.array{}
-- _checkpoint_summary as (source, next, values) and (source, next) lists
local function summary(h) local o = {} for i, s in ipairs(h) do o[i] = { s.metadata.source, s.next, s.values } end return o end
local function source_next(h) local o = {} for i, s in ipairs(h) do o[i] = { s.metadata.source, s.next } end return o end

local e = state()
e:add_node("ask", function()
  local answer = sst.interrupt("Q?")
  return { value = { "a:" .. answer } }
end)
e:add_edge(sst.START, "ask")
local executor = e:compile{ checkpointer = true }
local g = state()
g:add_node("executor", executor)
g:add_edge(sst.START, "executor")
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

graph:invoke({ value = sst.array{} }, config)
local sub_config = graph:get_state(config, { subgraphs = true }).tasks[1].state.config
graph:invoke(sst.Command{ resume = "first" }, config)

T.eq(summary(graph:get_state_history(config)), {
  { "loop", E, { value = { "a:first" } } },
  { "loop", { "executor" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "original history")

-- time travel to the interrupt
graph:invoke(nil, sub_config)

local post_tt = graph:get_state_history(config)
T.eq(source_next(post_tt), {
  { "fork", { "executor" } },
  { "loop", E },
  { "loop", { "executor" } },
  { "input", { "__start__" } },
}, "history after the time travel")
-- the fork's parent is the replay point
local replay_point_id = sub_config.configurable.checkpoint_map[""]
T.eq(post_tt[1].parent_config.configurable.checkpoint_id, replay_point_id, "fork parent")

local result = graph:invoke(sst.Command{ resume = "second" }, config)
T.eq(result.value, { "a:second" }, "resumed")

T.eq(summary(graph:get_state_history(config)), {
  { "loop", E, { value = { "a:second" } } },
  { "fork", { "executor" }, { value = E } },
  { "loop", E, { value = { "a:first" } } },
  { "loop", { "executor" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "final history")
T.finish()
