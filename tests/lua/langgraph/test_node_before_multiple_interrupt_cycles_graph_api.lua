-- langgraph: test_pregel.py::test_node_before_multiple_interrupt_cycles_graph_api
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ count = sst.reducers.replace, data = sst.reducers.replace }
g:add_node("prepare", function(state) return { count = state.count + 10 } end)
g:add_node("multi_interrupt", function()
  local first = sst.interrupt("First question?")
  local second = sst.interrupt("Second question?")
  return { data = first .. "," .. second }
end)
g:add_edge(sst.START, "prepare")
g:add_edge("prepare", "multi_interrupt")
g:add_edge("multi_interrupt", sst.END)
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

local result = graph:invoke({ count = 0, data = "" }, config)
T.check(result.__interrupt__ ~= nil, "first: interrupted")
T.eq(result.__interrupt__ and result.__interrupt__[1].value, "First question?", "first")
result = graph:invoke(sst.Command{ resume = "first_answer" }, config)
T.check(result.__interrupt__ ~= nil, "second: interrupted")
T.eq(result.__interrupt__ and result.__interrupt__[1].value, "Second question?", "second")
result = graph:invoke(sst.Command{ resume = "second_answer" }, config)
T.eq(result, { count = 10, data = "first_answer,second_answer" }, "result")
T.finish()
