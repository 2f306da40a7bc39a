-- langgraph: test_time_travel.py::test_3_levels_deep_time_travel_to_middle_subgraph
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
-- parent: outer (middle, checkpointer=true); middle: inner (checkpointer=true);
-- inner: step_a -> ask_1 (interrupt) -> ask_2 (interrupt) -> END
local i = state()
i:add_node("step_a", node("step_a", "step_a_done"))
i:add_node("ask_1", asker("ask_1", "Question 1?", "ask_1:"))
i:add_node("ask_2", asker("ask_2", "Question 2?", "ask_2:"))
i:add_edge(sst.START, "step_a")
i:add_edge("step_a", "ask_1")
i:add_edge("ask_1", "ask_2")
i:add_edge("ask_2", sst.END)
local inner = i:compile{ checkpointer = true }
local m = state()
m:add_node("inner", inner)
m:add_edge(sst.START, "inner")
local middle = m:compile{ checkpointer = true }
local g = state()
g:add_node("outer", middle)
g:add_edge(sst.START, "outer")
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "answer_1" }, config)
-- the middle subgraph's config at the second interrupt
local parent_state = graph:get_state(config, { subgraphs = true })
local mid_config = parent_state.tasks[1].state.config
graph:invoke(sst.Command{ resume = "answer_2" }, config)

-- 1: replay from the middle checkpoint
called = {}
local replay_result = graph:invoke(nil, mid_config)
T.check(replay_result.__interrupt__ ~= nil, "replay interrupted")

-- 2: fork from it
called = {}
local fork_config = graph:update_state(mid_config, { value = { "forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")
T.finish()
