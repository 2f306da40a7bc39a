-- langgraph: test_large_cases.py::test_send_to_nested_graphs
-- The FakeTracer run count (Python callbacks) is left out.
-- StateGraph(JokeState, output_schema=OverallState) declares JokeState's and
-- OverallState's fields with OverallState as the output schema.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function continue_to_jokes(state)
  local sends = {}
  for i, s in ipairs(state.subjects) do sends[i] = sst.Send("generate_joke", { subject = s }) end
  return sends
end

local function edit(state) return { subject = state.subject .. " - hohoho" } end

-- subgraph
local subgraph = sst.StateGraph({ subject = sst.reducers.replace, subjects = sst.reducers.replace,
                                  jokes = { reducer = sst.reducers.append, default = sst.array{} } },
                                { output_schema = { "subjects", "jokes" } })
subgraph:add_node("edit", edit)
subgraph:add_node("generate", function(state) return { jokes = { "Joke about " .. state.subject } } end)
subgraph:set_entry_point("edit")
subgraph:add_edge("edit", "generate")
subgraph:set_finish_point("generate")

-- parent graph
local builder = sst.StateGraph{ subjects = sst.reducers.replace,
                                jokes = { reducer = sst.reducers.append, default = sst.array{} } }
builder:add_node("generate_joke", subgraph:compile{ interrupt_before = { "generate" } })
builder:add_conditional_edges(sst.START, continue_to_jokes)
builder:add_edge("generate_joke", sst.END)

local graph = builder:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

-- invoke and pause at nested interrupt
T.eq(graph:invoke({ subjects = { "cats", "dogs" } }, config), { subjects = { "cats", "dogs" }, jokes = sst.array{} },
     "invoke")

-- check state
local outer_state = graph:get_state(config)

-- update state of dogs joke graph
graph:update_state(outer_state.tasks[2].state, { subject = "turtles - hohoho" })

-- continue past interrupt
local chunks = lg.collect(graph:stream(nil, config, "updates"))
table.sort(chunks, function(a, b) return a.generate_joke.jokes[1] < b.generate_joke.jokes[1] end)
T.eq(chunks, {
  { generate_joke = { jokes = { "Joke about cats - hohoho" } } },
  { generate_joke = { jokes = { "Joke about turtles - hohoho" } } },
}, "stream")
T.finish()
