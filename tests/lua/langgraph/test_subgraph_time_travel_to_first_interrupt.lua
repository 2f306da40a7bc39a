-- langgraph: test_time_travel.py::test_subgraph_time_travel_to_first_interrupt
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

-- run until the first interrupt
local result = graph:invoke({ value = sst.array{} }, config)
T.check(result.__interrupt__ ~= nil, "interrupted")
T.eq(result.__interrupt__[1].value, "Question 1?", "first")

-- the subgraph's config at the first interrupt
local parent_state = graph:get_state(config, { subgraphs = true })
local sub_config_at_first = parent_state.tasks[1].state.config

result = graph:invoke(sst.Command{ resume = "answer_1" }, config)
T.eq(result.__interrupt__[1].value, "Question 2?", "second")
result = graph:invoke(sst.Command{ resume = "answer_2" }, config)
T.check(result.__interrupt__ == nil, "done")

-- 1: replay from the subgraph checkpoint at the first interrupt
called = {}
local replay_result = graph:invoke(nil, sub_config_at_first)
T.check(replay_result.__interrupt__ ~= nil, "replay interrupted")
T.eq(replay_result.__interrupt__[1].value, "Question 1?", "replay interrupt")
T.check(not has(called, "step_a"), "step_a not re-run")
T.check(has(called, "ask_1"), "ask_1 ran")

-- 2: fork from the same checkpoint
called = {}
local fork_config = graph:update_state(sub_config_at_first, { value = { "forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")
T.eq(fork_result.__interrupt__[1].value, "Question 1?", "fork interrupt")
T.check(not has(called, "step_a"), "fork: step_a not re-run")
T.check(has(called, "ask_1"), "fork: ask_1 ran")
T.finish()
