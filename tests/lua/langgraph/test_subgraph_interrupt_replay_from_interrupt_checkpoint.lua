-- langgraph: test_time_travel.py::test_subgraph_interrupt_replay_from_interrupt_checkpoint
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

-- run until the interrupt
graph:invoke({ value = sst.array{} }, config)

-- the subgraph's state can be read
local parent_state = graph:get_state(config, { subgraphs = true })
T.check(#parent_state.tasks > 0, "tasks")
T.check(parent_state.tasks[1].state ~= nil, "task state")

graph:invoke(sst.Command{ resume = "answer" }, config)

-- the parent checkpoint where the interrupt fired
local interrupt_checkpoint
for _, s in ipairs(graph:get_state_history(config)) do
  if sst.json_encode(s.next) == '["subgraph_node"]' and s.tasks then
    local any = false
    for _, t in ipairs(s.tasks) do any = any or (t.interrupts ~= nil and #t.interrupts > 0) end
    if any then interrupt_checkpoint = s; break end
  end
end

called = {}
local replay_result = graph:invoke(nil, interrupt_checkpoint.config)
T.check(replay_result.__interrupt__ ~= nil, "replay interrupted")
T.check(has(called, "step_a"), "step_a ran")
T.check(has(called, "ask_human"), "ask_human ran")
T.check(not has(called, "step_b"), "step_b did not run")
T.finish()
