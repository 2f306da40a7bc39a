-- langgraph: test_large_cases.py::test_in_one_fan_out_out_one_graph_state
-- deliberate: a superstep's updates and task results stream in task order
--   (retriever_one before retriever_two), whichever finished first, so a
--   stream is the same on 1 worker or 16 (DESIGN.md semantic 3); LangGraph
--   streams them as they finish (retriever_two first, retriever_one sleeps).
-- time.sleep(0.1) in retriever_one is a busy wait.
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
workflow:add_node("retriever_one", function()
  -- timer ensures stream output order is stable; the update order is the
  -- order of the graph definition, not the finishing order
  local t = os.clock()
  while os.clock() - t < 0.1 do end
  return { docs = { "doc1", "doc2" } }
end)
workflow:add_node("retriever_two", function() return { docs = { "doc3", "doc4" } } end)
workflow:add_node("qa", function(data)
  local docs = {}
  for i, d in ipairs(data.docs) do docs[i] = d end
  return { answer = table.concat(docs, ",") }
end)
workflow:set_entry_point("rewrite_query")
workflow:add_edge("rewrite_query", "retriever_one")
workflow:add_edge("rewrite_query", "retriever_two")
workflow:add_edge("retriever_one", "qa")
workflow:add_edge("retriever_two", "qa")
workflow:set_finish_point("qa")

local app = workflow:compile()

T.eq(app:invoke({ query = "what is weather in sf" }), {
  query = "query: what is weather in sf",
  docs = { "doc1", "doc2", "doc3", "doc4" },
  answer = "doc1,doc2,doc3,doc4",
}, "invoke")

T.eq(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "updates")), {
  { rewrite_query = { query = "query: what is weather in sf" } },
  { retriever_one = { docs = { "doc1", "doc2" } } },
  { retriever_two = { docs = { "doc3", "doc4" } } },
  { qa = { answer = "doc1,doc2,doc3,doc4" } },
}, "stream updates")

T.eq(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "values")), {
  { query = "what is weather in sf", docs = sst.array{} },
  { query = "query: what is weather in sf", docs = sst.array{} },
  { query = "query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4" } },
  { query = "query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4" }, answer = "doc1,doc2,doc3,doc4" },
}, "stream values")

-- debug events: timestamp and payload.id are AnyStr()
local got = lg.collect(app:stream({ query = "what is weather in sf" }, nil, { "values", "updates", "debug" }))
for i, c in ipairs(got) do
  if c[1] == "debug" then
    local ev = sst.to_table(c[2])
    T.check(lg.any_str(ev.timestamp), "debug " .. i .. ": timestamp")
    T.check(ev.payload ~= nil and lg.any_str(ev.payload.id), "debug " .. i .. ": payload id")
    ev.timestamp = true
    if ev.payload then ev.payload.id = true end
    got[i] = { "debug", ev }
  end
end
local function task(step, name, input)
  return { "debug", { type = "task", timestamp = true, step = step,
                      payload = { id = true, name = name, input = input, triggers = { "branch:to:" .. name } } } }
end
local function result(step, name, res)
  return { "debug", { type = "task_result", timestamp = true, step = step,
                      payload = { id = true, name = name, result = res, error = sst.null, interrupts = sst.array{} } } }
end
local q0 = { query = "what is weather in sf", docs = sst.array{} }
local q1 = { query = "query: what is weather in sf", docs = sst.array{} }
local q2 = { query = "query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4" } }
T.eq(got, {
  { "values", q0 },
  task(1, "rewrite_query", q0),
  { "updates", { rewrite_query = { query = "query: what is weather in sf" } } },
  result(1, "rewrite_query", { query = "query: what is weather in sf" }),
  { "values", q1 },
  task(2, "retriever_one", q1),
  task(2, "retriever_two", q1),
  { "updates", { retriever_one = { docs = { "doc1", "doc2" } } } },
  result(2, "retriever_one", { docs = { "doc1", "doc2" } }),
  { "updates", { retriever_two = { docs = { "doc3", "doc4" } } } },
  result(2, "retriever_two", { docs = { "doc3", "doc4" } }),
  { "values", q2 },
  task(3, "qa", q2),
  { "updates", { qa = { answer = "doc1,doc2,doc3,doc4" } } },
  result(3, "qa", { answer = "doc1,doc2,doc3,doc4" }),
  { "values", { query = "query: what is weather in sf", answer = "doc1,doc2,doc3,doc4",
                docs = { "doc1", "doc2", "doc3", "doc4" } } },
}, "stream values, updates, debug")
T.finish()
