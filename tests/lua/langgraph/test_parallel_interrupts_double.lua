-- langgraph: test_pregel.py::test_parallel_interrupts_double
-- The pydantic states are written as plain fields (rule: dict variant).
local sst = superstep
local T = require("checks")
local lg = require("lg")

-- --- CHILD GRAPH ---
local cb = sst.StateGraph{
  prompt = sst.reducers.replace,
  human_input = sst.reducers.replace,
  human_inputs = { reducer = sst.reducers.append, default = sst.array{} },
}
cb:add_node("get_human_input", function(state)
  return { human_inputs = { sst.interrupt(state.prompt) } }
end)
cb:add_node("get_dolphin_input", function(state)
  return { human_inputs = { sst.interrupt(state.prompt) } }
end)
cb:add_edge(sst.START, "get_human_input")
cb:add_edge(sst.START, "get_dolphin_input")
local child_graph = cb:compile()

-- --- PARENT GRAPH ---
local pb = sst.StateGraph{
  prompts = sst.reducers.replace,
  human_inputs = { reducer = sst.reducers.append, default = sst.array{} },
}
pb:add_node("child_graph", child_graph)
pb:add_node("cleanup", function(state)
  T.eq(#state.human_inputs, #state.prompts * 2, "cleanup: two inputs per prompt")
end)
pb:add_conditional_edges(sst.START, function(state)
  local sends = {}
  for i, prompt in ipairs(state.prompts) do sends[i] = sst.Send("child_graph", { prompt = prompt }) end
  return sends
end, { "child_graph" })
pb:add_edge("child_graph", "cleanup")
pb:add_edge("cleanup", sst.END)
local parent_graph = pb:compile{ checkpointer = sst.MemorySaver() }

-- --- CLIENT INVOCATION ---
local thread_config = lg.thread("parallel-double-" .. tostring(os.time()))
local current_input = { prompts = { "a", "b" } }
local invokes, events, done = 0, {}, false
while invokes < 10 do
  invokes = invokes + 1
  events[invokes] = {}
  local current_interrupts = {}
  for event in parent_graph:stream(current_input, thread_config, "updates") do
    events[invokes][#events[invokes] + 1] = event
    for _, it in ipairs(event.__interrupt__ or {}) do current_interrupts[#current_interrupts + 1] = it end
  end
  if #current_interrupts > 0 then
    current_input = sst.Command{ resume = { [current_interrupts[1].id] = "Resume #" .. invokes } }
  else
    done = true
    break
  end
end
T.check(done, "Detected infinite loop")
T.eq(invokes, 5, "invokes")
T.eq(#events, 5, "len(events)")
T.finish()
