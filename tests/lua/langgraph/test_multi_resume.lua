-- langgraph: test_pregel.py::test_multi_resume
-- invoke(..., stream_mode="values") returns the final state like invoke.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local saver = sst.MemorySaver()
local cb = sst.StateGraph{
  prompt = sst.reducers.replace,
  human_input = sst.reducers.replace,
  human_inputs = sst.reducers.replace,
}
cb:add_node("get_human_input", function(state)
  local human_input = sst.interrupt(state.prompt)
  return { human_input = human_input, human_inputs = { human_input } }
end)
cb:add_edge(sst.START, "get_human_input")
cb:add_edge("get_human_input", sst.END)
local child_graph = cb:compile{ checkpointer = saver }

local pb = sst.StateGraph{
  prompts = sst.reducers.replace,
  human_inputs = { reducer = sst.reducers.append, default = sst.array{} },
}
pb:add_node("child_graph", child_graph)
pb:add_node("cleanup", function(state)
  assert(#state.human_inputs == #state.prompts)
end)
pb:add_conditional_edges(sst.START, function(state)
  local sends = {}
  for _, prompt in ipairs(state.prompts) do sends[#sends + 1] = sst.Send("child_graph", { prompt = prompt }) end
  return sends
end, { "child_graph" })
pb:add_edge("child_graph", "cleanup")
pb:add_edge("cleanup", sst.END)
local parent_graph = pb:compile{ checkpointer = saver }

local thread_config = lg.thread("multi-resume-thread")
local prompts = { "a", "b", "c", "d", "e" }
local events = parent_graph:invoke({ prompts = prompts }, thread_config)
T.eq(#(events.__interrupt__ or {}), #prompts, "interrupt count")
local values = {}
for _, i in ipairs(events.__interrupt__ or {}) do values[#values + 1] = i.value end
table.sort(values)
T.eq(values, prompts, "interrupt values (as a set)")

local resume_map = {}
for _, i in ipairs(parent_graph:get_state(thread_config).interrupts) do
  resume_map[i.id] = "human input for prompt " .. i.value
end
local result = parent_graph:invoke(sst.Command{ resume = resume_map }, thread_config)
local expected = {}
for i, p in ipairs(prompts) do expected[i] = "human input for prompt " .. p end
T.eq(result, { prompts = prompts, human_inputs = expected }, "result")
T.finish()
