-- langgraph: test_time_travel.py::test_subgraph_time_travel_resume_from_first_interrupt
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

-- original run: both interrupts answered
graph:invoke({ value = sst.array{} }, config)
local sub_config_at_first = graph:get_state(config, { subgraphs = true }).tasks[1].state.config
graph:invoke(sst.Command{ resume = "answer_1" }, config)
graph:invoke(sst.Command{ resume = "answer_2" }, config)

T.eq(summary(graph:get_state_history(config)), {
  { "loop", E, { value = { "step_a_done", "ask_1:answer_1", "ask_2:answer_2" } } },
  { "loop", { "executor" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "original history")

-- time travel to the subgraph checkpoint of the first interrupt
called = {}
local replay_result = graph:invoke(nil, sub_config_at_first)
T.eq(replay_result.__interrupt__[1].value, "Question 1?", "replay interrupt")
T.check(not has(called, "step_a"), "step_a not re-run")

-- the fork is now the latest parent checkpoint
T.eq(source_next(graph:get_state_history(config)), {
  { "fork", { "executor" } },
  { "loop", E },
  { "loop", { "executor" } },
  { "input", { "__start__" } },
}, "history after the time travel")

-- answer both again
called = {}
local resume_1 = graph:invoke(sst.Command{ resume = "new_answer_1" }, config)
T.eq(resume_1.__interrupt__[1].value, "Question 2?", "resume 1")
T.check(has(called, "ask_1"), "ask_1 ran")
called = {}
local resume_2 = graph:invoke(sst.Command{ resume = "new_answer_2" }, config)
T.eq(resume_2.value, { "step_a_done", "ask_1:new_answer_1", "ask_2:new_answer_2" }, "resume 2")

T.eq(summary(graph:get_state_history(config)), {
  { "loop", E, { value = { "step_a_done", "ask_1:new_answer_1", "ask_2:new_answer_2" } } },
  { "fork", { "executor" }, { value = E } },
  { "loop", E, { value = { "step_a_done", "ask_1:answer_1", "ask_2:answer_2" } } },
  { "loop", { "executor" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "final history")
T.finish()
