-- langgraph: test_time_travel.py::test_subgraph_time_travel_resume_from_second_interrupt
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
-- executor: step_a -> ask_1 (interrupt) -> ask_2 (interrupt) -> END
local function make_graph()
  local e = state()
  e:add_node("step_a", node("step_a", "step_a_done"))
  e:add_node("ask_1", asker("ask_1", "Question 1?", "ask_1:"))
  e:add_node("ask_2", asker("ask_2", "Question 2?", "ask_2:"))
  e:add_edge(sst.START, "step_a")
  e:add_edge("step_a", "ask_1")
  e:add_edge("ask_1", "ask_2")
  e:add_edge("ask_2", sst.END)
  local executor = e:compile{ checkpointer = true }
  local g = state()
  g:add_node("executor", executor)
  g:add_edge(sst.START, "executor")
  return g:compile{ checkpointer = sst.MemorySaver() }
end
local graph = make_graph()
local config = lg.thread("1")
local E = sst.array{}
-- _checkpoint_summary as (source, next, values) and (source, next) lists
local function summary(h) local o = {} for i, s in ipairs(h) do o[i] = { s.metadata.source, s.next, s.values } end return o end
local function source_next(h) local o = {} for i, s in ipairs(h) do o[i] = { s.metadata.source, s.next } end return o end

graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "answer_1" }, config)
local sub_config_at_second = graph:get_state(config, { subgraphs = true }).tasks[1].state.config
graph:invoke(sst.Command{ resume = "answer_2" }, config)

T.eq(summary(graph:get_state_history(config)), {
  { "loop", E, { value = { "step_a_done", "ask_1:answer_1", "ask_2:answer_2" } } },
  { "loop", { "executor" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "original history")

-- time travel to the second interrupt
called = {}
local replay_result = graph:invoke(nil, sub_config_at_second)
T.eq(replay_result.__interrupt__[1].value, "Question 2?", "replay interrupt")
T.check(not has(called, "step_a"), "step_a not re-run")
T.check(not has(called, "ask_1"), "ask_1 not re-run")

T.eq(source_next(graph:get_state_history(config)), {
  { "fork", { "executor" } },
  { "loop", E },
  { "loop", { "executor" } },
  { "input", { "__start__" } },
}, "history after the time travel")

-- a new answer for ask_2 only; ask_1's answer is kept
called = {}
local resume_result = graph:invoke(sst.Command{ resume = "new_answer_2" }, config)
T.eq(resume_result.value, { "step_a_done", "ask_1:answer_1", "ask_2:new_answer_2" }, "resumed")

T.eq(summary(graph:get_state_history(config)), {
  { "loop", E, { value = { "step_a_done", "ask_1:answer_1", "ask_2:new_answer_2" } } },
  { "fork", { "executor" }, { value = E } },
  { "loop", E, { value = { "step_a_done", "ask_1:answer_1", "ask_2:answer_2" } } },
  { "loop", { "executor" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "final history")
T.finish()
