-- langgraph: test_pregel.py::test_in_one_fan_out_state_graph_waiting_edge_plus_regular
-- time.sleep in analyzer_one and retriever_two only orders Python's stream;
-- it is left out. Python sorts chunks by repr; here by their JSON.
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
workflow:add_node("qa", function(data) return { answer = table.concat(sst.to_table(data.docs), ",") } end)
workflow:set_entry_point("rewrite_query")
workflow:add_edge("rewrite_query", "analyzer_one")
workflow:add_edge("analyzer_one", "retriever_one")
workflow:add_edge("rewrite_query", "retriever_two")
workflow:add_edge({ "retriever_one", "retriever_two" }, "qa")
workflow:set_finish_point("qa")
-- silly edge, to make sure having been triggered before doesn't break
-- semantics of named barrier (== waiting edges)
workflow:add_edge("rewrite_query", "qa")

local app = workflow:compile()
T.eq(app:invoke({ query = "what is weather in sf" }), {
  query = "analyzed: query: what is weather in sf",
  docs = { "doc1", "doc2", "doc3", "doc4" },
  answer = "doc1,doc2,doc3,doc4",
}, "invoke")

local rewrite = { rewrite_query = { query = "query: what is weather in sf" } }
local analyzer = { analyzer_one = { query = "analyzed: query: what is weather in sf" } }
local empty_qa = { qa = { answer = "" } }
local retriever_one_result = { retriever_one = { docs = { "doc1", "doc2" } } }
local retriever_two_result = { retriever_two = { docs = { "doc3", "doc4" } } }

local function sorted_json(list)
  local out = {}
  for i, v in ipairs(list) do out[i] = sst.json_encode(v) end
  table.sort(out)
  return out
end
local function index_of(list, v)
  for i, x in ipairs(list) do if sst.json_encode(x) == sst.json_encode(v) then return i end end
end

local function assert_valid_stream_order(chunks, terminal, what)
  T.eq(chunks[1], rewrite, what .. ": first")
  T.eq(chunks[#chunks], terminal, what .. ": last")
  local middle = {}
  for i = 2, #chunks - 1 do middle[#middle + 1] = chunks[i] end
  T.eq(sorted_json(middle), sorted_json({ empty_qa, analyzer, retriever_one_result, retriever_two_result }),
       what .. ": middle")
  local a, r = index_of(middle, analyzer), index_of(middle, retriever_one_result)
  T.check(a ~= nil and r ~= nil and a < r, what .. ": analyzer before retriever_one")
end

assert_valid_stream_order(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "updates")),
                          { qa = { answer = "doc1,doc2,doc3,doc4" } }, "stream")

local app_w_interrupt = workflow:compile{ checkpointer = sst.MemorySaver(), interrupt_after = { "retriever_one" } }
local config = lg.thread("1")
assert_valid_stream_order(lg.collect(app_w_interrupt:stream({ query = "what is weather in sf" }, config, "updates")),
                          { __interrupt__ = sst.array{} }, "interrupt_after stream")
T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")),
     { { qa = { answer = "doc1,doc2,doc3,doc4" } } }, "interrupt_after resume")
T.finish()
