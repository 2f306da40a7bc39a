-- langgraph: test_pregel.py::test_multiple_nodes_before_interrupt_resume_graph_api
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ value = sst.reducers.replace, answer = sst.reducers.replace }
g:add_node("step_a", function(state) return { value = state.value + 1 } end)
g:add_node("step_b", function(state) return { value = state.value * 2 } end)
g:add_node("ask", function(state)
  return { answer = sst.interrupt("Result so far is " .. state.value .. ". What next?") }
end)
g:add_edge(sst.START, "step_a")
g:add_edge("step_a", "step_b")
g:add_edge("step_b", "ask")
g:add_edge("ask", sst.END)
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

local result = graph:invoke({ value = 5, answer = "" }, config)
T.check(result.__interrupt__ ~= nil, "interrupted")
T.eq(result.__interrupt__ and result.__interrupt__[1].value, "Result so far is 12. What next?", "interrupt value")
result = graph:invoke(sst.Command{ resume = "continue" }, config)
T.eq(result, { value = 12, answer = "continue" }, "result")
T.finish()
