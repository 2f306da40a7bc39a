-- langgraph: test_time_travel.py::test_subgraph_fork_from_before
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

local function make_graph()
  local s = state()
  s:add_node("step_a", node("step_a", "sub_a"))
  s:add_node("step_b", node("step_b", "sub_b"))
  s:add_edge(sst.START, "step_a")
  s:add_edge("step_a", "step_b")
  local subgraph = s:compile()
  local g = state()
  g:add_node("parent_node", node("parent_node", "parent"))
  g:add_node("subgraph", subgraph)
  g:add_node("post_process", node("post_process", "post"))
  g:add_edge(sst.START, "parent_node")
  g:add_edge("parent_node", "subgraph")
  g:add_edge("subgraph", "post_process")
  return g:compile{ checkpointer = sst.MemorySaver() }
end
local graph = make_graph()
local config = lg.thread("1")
graph:invoke({ value = sst.array{} }, config)

local before_sub
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["subgraph"]' then before_sub = s; break end
end

called = {}
local fork_config = graph:update_state(before_sub.config, { value = { "forked" } })
local fork_result = graph:invoke(nil, fork_config)
T.check(has(called, "step_a"), "step_a ran")
T.check(has(called, "step_b"), "step_b ran")
T.check(has(called, "post_process"), "post_process ran")
T.check(has(fork_result.value, "forked"), "forked")
T.check(has(fork_result.value, "sub_a"), "sub_a")
T.check(has(fork_result.value, "sub_b"), "sub_b")
T.finish()
