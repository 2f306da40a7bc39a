-- langgraph: test_pregel.py::test_in_one_fan_out_state_graph_waiting_edge_multiple_cond_edge
-- time.sleep in retriever_two only orders Python's stream; it is left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sorted_add = lg.sorted_add

local workflow = sst.StateGraph{
  query = sst.reducers.replace,
  answer = sst.reducers.replace,
  docs = { reducer = sorted_add, default = sst.array{} },
}
workflow:add_node("rewrite_query", function(data) return { query = "query: " .. data.query } end)
workflow:add_node("analyzer_one", function(data) return { query = "analyzed: " .. data.query } end)
workflow:add_node("retriever_one", function() return { docs = { "doc1", "doc2" } } end)
workflow:add_node("retriever_two", function() return { docs = { "doc3", "doc4" } } end)
workflow:add_node("decider", function() return nil end)
workflow:add_node("qa", function(data) return { answer = table.concat(sst.to_table(data.docs), ",") } end)
workflow:set_entry_point("rewrite_query")
workflow:add_conditional_edges("rewrite_query", function() return { "analyzer_one", "retriever_two" } end)
workflow:add_edge("analyzer_one", "retriever_one")
workflow:add_edge({ "retriever_one", "retriever_two" }, "decider")
workflow:add_conditional_edges("decider", function(data)
  local _, n = data.query:gsub("analyzed", "")
  if n > 1 then return "qa" end
  return "rewrite_query"
end)
workflow:set_finish_point("qa")
local app = workflow:compile()

T.eq(app:invoke({ query = "what is weather in sf" }), {
  query = "analyzed: query: analyzed: query: what is weather in sf",
  answer = "doc1,doc1,doc2,doc2,doc3,doc3,doc4,doc4",
  docs = { "doc1", "doc1", "doc2", "doc2", "doc3", "doc3", "doc4", "doc4" },
}, "invoke")

T.eq(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "updates")), {
  { rewrite_query = { query = "query: what is weather in sf" } },
  { analyzer_one = { query = "analyzed: query: what is weather in sf" } },
  { retriever_two = { docs = { "doc3", "doc4" } } },
  { retriever_one = { docs = { "doc1", "doc2" } } },
  { decider = sst.null },
  { rewrite_query = { query = "query: analyzed: query: what is weather in sf" } },
  { analyzer_one = { query = "analyzed: query: analyzed: query: what is weather in sf" } },
  { retriever_two = { docs = { "doc3", "doc4" } } },
  { retriever_one = { docs = { "doc1", "doc2" } } },
  { decider = sst.null },
  { qa = { answer = "doc1,doc1,doc2,doc2,doc3,doc3,doc4,doc4" } },
}, "stream")
T.finish()
