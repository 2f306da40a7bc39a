-- langgraph: test_time_travel.py::test_subgraph_interrupt_full_flow
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
-- the subgraph: step_a -> ask_human (interrupt) -> step_b
local function make_sub(checkpointer)
  local s = state()
  s:add_node("step_a", node("step_a", "sub_a"))
  s:add_node("ask_human", asker("ask_human", "Provide input:", "human:"))
  s:add_node("step_b", node("step_b", "sub_b"))
  s:add_edge(sst.START, "step_a")
  s:add_edge("step_a", "ask_human")
  s:add_edge("ask_human", "step_b")
  return s:compile{ checkpointer = checkpointer }
end
-- the parent: router -> subgraph_node -> post_process
local function make_parent(sub)
  local g = state()
  g:add_node("router", node("router", "routed"))
  g:add_node("subgraph_node", sub)
  g:add_node("post_process", node("post_process", "post"))
  g:add_edge(sst.START, "router")
  g:add_edge("router", "subgraph_node")
  g:add_edge("subgraph_node", "post_process")
  return g:compile{ checkpointer = sst.MemorySaver() }
end
local find_next = lg.find_next

local graph = make_parent(make_sub(true))
local config = lg.thread("1")

local result = graph:invoke({ value = sst.array{} }, config)
T.check(result.__interrupt__ ~= nil, "interrupted")
T.check(has(called, "router"), "router ran")
T.check(has(called, "step_a"), "step_a ran")
T.check(has(called, "ask_human"), "ask_human ran")

-- the subgraph's own checkpoint config
local parent_state = graph:get_state(config, { subgraphs = true })
local sub_task = parent_state.tasks[1]
T.check(sub_task.state ~= nil, "task state")
local sub_config = sub_task.state.config

-- fork from the subgraph checkpoint: the interrupt fires again
called = {}
local fork_config = graph:update_state(sub_config, { value = { "sub_forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(fork_result.__interrupt__ ~= nil, "fork interrupted")
T.eq(fork_result.__interrupt__[1].value, "Provide input:", "interrupt value")

-- resume with a new answer: the subgraph and the parent complete
called = {}
local final_result = graph:invoke(sst.Command{ resume = "new_answer" }, fork_config)
T.check(has(called, "ask_human"), "ask_human ran")
T.check(has(final_result.value, "human:new_answer"), "human:new_answer")
T.check(has(called, "step_b"), "step_b ran")
T.check(has(final_result.value, "sub_b"), "sub_b")
T.check(has(called, "post_process"), "post_process ran")
T.check(has(final_result.value, "post"), "post")
T.finish()
