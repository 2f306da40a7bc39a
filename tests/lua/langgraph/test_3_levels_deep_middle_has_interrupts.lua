-- langgraph: test_time_travel.py::test_3_levels_deep_middle_has_interrupts
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

-- parent: outer (middle); middle: pre (interrupt) -> inner; inner: step_a -> ask_1 (interrupt)
local i = state()
i:add_node("step_a", node("step_a", "step_a_done"))
i:add_node("ask_1", asker("ask_1", "Question 1?", "ask_1:"))
i:add_edge(sst.START, "step_a")
i:add_edge("step_a", "ask_1")
i:add_edge("ask_1", sst.END)
local inner = i:compile{ checkpointer = true }
local m = state()
m:add_node("pre", asker("pre", "Pre-question?", "pre:"))
m:add_node("inner", inner)
m:add_edge(sst.START, "pre")
m:add_edge("pre", "inner")
m:add_edge("inner", sst.END)
local middle = m:compile{ checkpointer = true }
local g = state()
g:add_node("outer", middle)
g:add_edge(sst.START, "outer")
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

local result = graph:invoke({ value = sst.array{} }, config)
T.eq(result.__interrupt__[1].value, "Pre-question?", "pre")
local mid_config_at_pre = graph:get_state(config, { subgraphs = true }).tasks[1].state.config

result = graph:invoke(sst.Command{ resume = "pre_answer" }, config)
T.eq(result.__interrupt__[1].value, "Question 1?", "ask_1")
local mid_config_at_ask1 = graph:get_state(config, { subgraphs = true }).tasks[1].state.config

result = graph:invoke(sst.Command{ resume = "answer_1" }, config)
T.check(result.__interrupt__ == nil, "done")

-- time travel to the middle checkpoint at pre's interrupt
called = {}
local replay_result = graph:invoke(nil, mid_config_at_pre)
T.check(replay_result.__interrupt__ ~= nil, "replay at pre interrupted")
T.eq(replay_result.__interrupt__[1].value, "Pre-question?", "replay at pre")
T.check(has(called, "pre"), "pre ran")
T.check(not has(called, "step_a"), "step_a did not run")
T.check(not has(called, "ask_1"), "ask_1 did not run")

called = {}
local fork_config = graph:update_state(mid_config_at_pre, { value = { "forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork at pre interrupted")
T.eq(fork_result.__interrupt__[1].value, "Pre-question?", "fork at pre")
T.check(has(called, "pre"), "fork: pre ran")
T.check(not has(called, "step_a"), "fork: step_a did not run")

-- time travel to the middle checkpoint at ask_1's interrupt
called = {}
replay_result = graph:invoke(nil, mid_config_at_ask1)
T.check(replay_result.__interrupt__ ~= nil, "replay at ask_1 interrupted")
T.eq(replay_result.__interrupt__[1].value, "Question 1?", "replay at ask_1")
T.check(not has(called, "pre"), "pre not re-run")
T.check(has(called, "ask_1"), "ask_1 ran")

called = {}
fork_config = graph:update_state(mid_config_at_ask1, { value = { "forked" } })
fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork at ask_1 interrupted")
T.eq(fork_result.__interrupt__[1].value, "Question 1?", "fork at ask_1")
T.check(not has(called, "pre"), "fork: pre not re-run")
T.check(has(called, "ask_1"), "fork: ask_1 ran")
T.finish()
