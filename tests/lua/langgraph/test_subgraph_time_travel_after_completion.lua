-- langgraph: test_time_travel.py::test_subgraph_time_travel_after_completion
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

graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "answer_1" }, config)
graph:invoke(sst.Command{ resume = "answer_2" }, config)

-- the final parent state has no pending tasks
local final_state = graph:get_state(config)
T.eq(#final_state.tasks, 0, "no tasks")

-- replaying the final parent checkpoint does nothing
called = {}
local replay_result = graph:invoke(nil, final_state.config)
T.check(replay_result.__interrupt__ == nil, "not interrupted")
T.check(not has(called, "step_a"), "step_a not re-run")
T.check(not has(called, "ask_1"), "ask_1 not re-run")
T.check(not has(called, "ask_2"), "ask_2 not re-run")
T.check(has(replay_result.value, "step_a_done"), "step_a_done")
T.check(has(replay_result.value, "ask_1:answer_1"), "ask_1:answer_1")
T.check(has(replay_result.value, "ask_2:answer_2"), "ask_2:answer_2")
T.finish()
