-- langgraph: test_pregel.py::test_conditional_entrypoint_graph_state
-- The JSON-schema and drawing snapshots are left out (Python's syrupy files).
-- `steps: Annotated[list, operator.add]` starts as [] in LangGraph because
-- the type is list; here the default is written out.
local sst = superstep
local T = require("checks")

local g = sst.StateGraph{
  input = sst.reducers.replace,
  output = sst.reducers.replace,
  steps = { reducer = sst.reducers.append, default = sst.array{} },
}
g:add_node("left", function(s) return { output = s.input .. "->left" } end)
g:add_node("right", function(s) return { output = s.input .. "->right" } end)
g:set_conditional_entry_point(function(s)
  T.eq(s.steps, sst.array{}, "input read from the state")
  if #s.input > 10 then return "go-right" end
  return "go-left"
end, { ["go-left"] = "left", ["go-right"] = "right" })
g:add_conditional_edges("left", function() return sst.END end, { [sst.END] = sst.END })
g:add_edge("right", sst.END)
local app = g:compile()

T.eq(app:invoke({ input = "what is weather in sf" }),
     { input = "what is weather in sf", output = "what is weather in sf->right", steps = sst.array{} },
     "invoke")
local chunks = {}
for c in app:stream({ input = "what is weather in sf" }, nil, "updates") do chunks[#chunks + 1] = c end
T.eq(chunks, { { right = { output = "what is weather in sf->right" } } }, "stream")
T.finish()
