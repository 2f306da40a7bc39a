-- langgraph: test_time_travel.py::test_subgraph_interrupt_replay_from_parent_then_resume
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
local E = sst.array{}
local function nexts(h) local o = {} for i, s in ipairs(h) do o[i] = s.next end return o end
local function sources(h) local o = {} for i, s in ipairs(h) do o[i] = s.metadata.source end return o end

graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "old_answer" }, config)

local original_history = graph:get_state_history(config)
T.eq(nexts(original_history), { E, { "post_process" }, { "subgraph_node" }, { "router" }, { "__start__" } }, "original next")

local interrupt_checkpoint = find_next(original_history, "subgraph_node")

called = {}
local replay_result = graph:invoke(nil, interrupt_checkpoint.config)
T.check(replay_result.__interrupt__ ~= nil, "replay interrupted")
T.eq(replay_result.__interrupt__[1].value, "Provide input:", "interrupt value")
T.check(has(called, "step_a"), "step_a ran")
T.check(has(called, "ask_human"), "ask_human ran")
T.check(not has(called, "step_b"), "step_b did not run")

-- a fork checkpoint was made
local post_replay_history = graph:get_state_history(config)
T.eq(nexts(post_replay_history),
     { { "subgraph_node" }, E, { "post_process" }, { "subgraph_node" }, { "router" }, { "__start__" } },
     "next after the replay")
T.eq(sources(post_replay_history), { "fork", "loop", "loop", "loop", "loop", "input" }, "sources after the replay")
local fork = post_replay_history[1]
T.eq(fork.parent_config.configurable.checkpoint_id, interrupt_checkpoint.config.configurable.checkpoint_id, "fork parent")

-- resume with a new answer: the whole graph completes
called = {}
local final_result = graph:invoke(sst.Command{ resume = "new_answer" }, config)
T.check(final_result.__interrupt__ == nil, "not interrupted")
T.check(has(final_result.value, "human:new_answer"), "human:new_answer")
T.check(has(final_result.value, "sub_b"), "sub_b")
T.check(has(final_result.value, "post"), "post")
T.check(has(called, "ask_human"), "ask_human ran")
T.check(has(called, "step_b"), "step_b ran")
T.check(has(called, "post_process"), "post_process ran")

local final_history = graph:get_state_history(config)
T.eq(nexts(final_history), {
  E, { "post_process" }, { "subgraph_node" },
  E, { "post_process" }, { "subgraph_node" }, { "router" }, { "__start__" },
}, "final next")
T.eq(sources(final_history), { "loop", "loop", "fork", "loop", "loop", "loop", "loop", "input" }, "final sources")
T.finish()
