-- langgraph: test_pregel.py::test_node_before_interrupt_resume_graph_api
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{
  topics = sst.reducers.replace,
  answers = { reducer = sst.reducers.append, default = sst.array{} },
}
g:add_node("setup", function(state)
  local topics = {}
  for i = 1, #state.topics do topics[i] = "topic " .. i end
  return { topics = topics }
end)
g:add_node("ask", function(state)
  local answers = {}
  for _, topic in ipairs(state.topics) do
    answers[#answers + 1] = sst.interrupt("Whats the answer for " .. topic .. "?")
  end
  return { answers = answers }
end)
g:add_edge(sst.START, "setup")
g:add_edge("setup", "ask")
g:add_edge("ask", sst.END)
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

local result = graph:invoke({ topics = { "a", "b" }, answers = sst.array{} }, config)
T.eq(lg.interrupt_values(result.__interrupt__), { "Whats the answer for topic 1?" }, "first interrupt")
result = graph:invoke(sst.Command{ resume = "answer1" }, config)
T.eq(lg.interrupt_values(result.__interrupt__), { "Whats the answer for topic 2?" }, "second interrupt")
result = graph:invoke(sst.Command{ resume = "answer2" }, config)
T.eq(result, { topics = { "topic 1", "topic 2" }, answers = { "answer1", "answer2" } }, "result")
T.finish()
