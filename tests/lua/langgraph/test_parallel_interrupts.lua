-- langgraph: test_pregel.py::test_parallel_interrupts
-- The pydantic states are written as plain fields (rule: dict variant).
-- UnsortedSequence: the chunks are compared as sorted JSON strings; the
-- interrupts' ids are checked and replaced by "ANY".
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
  local human_input = sst.interrupt(state.prompt)
  return { human_input = human_input, human_inputs = { human_input } }
end)
cb:add_edge(sst.START, "get_human_input")
cb:add_edge("get_human_input", sst.END)
local child_graph = cb:compile()

-- --- PARENT GRAPH ---
local pb = sst.StateGraph{
  prompts = sst.reducers.replace,
  human_inputs = { reducer = sst.reducers.append, default = sst.array{} },
}
pb:add_node("child_graph", child_graph)
pb:add_node("cleanup", function(state)
  T.eq(#state.human_inputs, #state.prompts, "cleanup: one input per prompt")
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
local thread_config = lg.thread("parallel-" .. tostring(os.time()))
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
T.eq(invokes, 3, "invokes")
T.eq(#events, 3, "len(events)")

local function unsorted(list)
  local out = {}
  for i, e in ipairs(list or {}) do
    if type(e) == "table" and e.__interrupt__ then
      local its = {}
      for j, it in ipairs(e.__interrupt__) do
        T.check(lg.any_str(it.id), "interrupt id")
        its[j] = { value = it.value, id = "ANY" }
      end
      e.__interrupt__ = its
    end
    out[i] = sst.json_encode(e)
  end
  table.sort(out)
  return out
end
local function interrupt_event(v) return { __interrupt__ = { { value = v, id = "ANY" } } } end

T.eq(unsorted(events[1]), unsorted({ interrupt_event("a"), interrupt_event("b") }), "events[1]")
local e2 = unsorted(events[2])
local e2a = unsorted({ interrupt_event("a"), { child_graph = { human_inputs = { "Resume #1" } } } })
local e2b = unsorted({ interrupt_event("b"), { child_graph = { human_inputs = { "Resume #1" } } } })
T.check(sst.json_encode(e2) == sst.json_encode(e2a) or sst.json_encode(e2) == sst.json_encode(e2b),
        "events[2]: got " .. sst.json_encode(e2))
T.eq(unsorted(events[3]), unsorted({
  { child_graph = { human_inputs = { "Resume #1" } }, __metadata__ = { cached = true } },
  { child_graph = { human_inputs = { "Resume #2" } } },
  { cleanup = sst.null },
}), "events[3]")
T.finish()
