-- langgraph: test_time_travel.py::test_subgraph_interrupt_resume_with_explicit_head_checkpoint_id
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

local s = state()
s:add_node("step_a", node("step_a", "sub_a"))
s:add_node("ask_human", asker("ask_human", "Provide input:", "human:"))
s:add_node("step_b", node("step_b", "sub_b"))
s:add_edge(sst.START, "step_a")
s:add_edge("step_a", "ask_human")
s:add_edge("ask_human", "step_b")
local subgraph = s:compile{ checkpointer = true }

local g = state()
g:add_node("subgraph_node", subgraph)
g:add_edge(sst.START, "subgraph_node")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ value = sst.array{} }, config)
T.eq(called, { "step_a", "ask_human" }, "called")

-- resume with the head checkpoint_id given explicitly: a resume, not a replay
local head_checkpoint_id = graph:get_state(config).config.configurable.checkpoint_id
called = {}
local resume_config = { configurable = { thread_id = "1", checkpoint_id = head_checkpoint_id, checkpoint_ns = "" } }
local result = graph:invoke(sst.Command{ resume = "answer" }, resume_config)
T.eq(called, { "ask_human", "step_b" }, "called on resume")
T.check(result.__interrupt__ == nil, "not interrupted")
T.eq(result.value, { "sub_a", "human:answer", "sub_b" }, "value")
T.finish()
