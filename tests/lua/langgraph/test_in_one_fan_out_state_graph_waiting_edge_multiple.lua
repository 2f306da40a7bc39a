-- langgraph: test_pregel.py::test_in_one_fan_out_state_graph_waiting_edge_multiple
-- Parametrized on with_cache: a loop over both. CachePolicy() is the node
-- option cache_policy = {} (defaults) and the `cache` fixture is
-- compile{ cache = sst.InMemoryCache() }. time.sleep in retriever_two only
-- orders Python's stream; it is left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sorted_add = lg.sorted_add

for _, with_cache in ipairs({ false, true }) do
  local what = "[with_cache=" .. tostring(with_cache) .. "] "
  local rewrite_query_count = 0
  local workflow = sst.StateGraph{
    query = sst.reducers.replace,
    answer = sst.reducers.replace,
    docs = { reducer = sorted_add, default = sst.array{} },
  }
  workflow:add_node("rewrite_query", function(data)
    rewrite_query_count = rewrite_query_count + 1
    return { query = "query: " .. data.query }
  end, { cache_policy = with_cache and {} or nil })
  workflow:add_node("analyzer_one", function(data) return { query = "analyzed: " .. data.query } end)
  workflow:add_node("retriever_one", function() return { docs = { "doc1", "doc2" } } end)
  workflow:add_node("retriever_two", function() return { docs = { "doc3", "doc4" } } end)
  workflow:add_node("decider", function() return nil end)
  workflow:add_node("qa", function(data) return { answer = table.concat(sst.to_table(data.docs), ",") } end)
  workflow:set_entry_point("rewrite_query")
  workflow:add_edge("rewrite_query", "analyzer_one")
  workflow:add_edge("analyzer_one", "retriever_one")
  workflow:add_edge("rewrite_query", "retriever_two")
  workflow:add_edge({ "retriever_one", "retriever_two" }, "decider")
  workflow:add_conditional_edges("decider", function(data)
    local _, n = data.query:gsub("analyzed", "")
    if n > 1 then return "qa" end
    return "rewrite_query"
  end)
  workflow:set_finish_point("qa")

  local app = workflow:compile{ cache = sst.InMemoryCache() }
  local expected = {
    query = "analyzed: query: analyzed: query: what is weather in sf",
    answer = "doc1,doc1,doc2,doc2,doc3,doc3,doc4,doc4",
    docs = { "doc1", "doc1", "doc2", "doc2", "doc3", "doc3", "doc4", "doc4" },
  }
  T.eq(app:invoke({ query = "what is weather in sf" }), expected, what .. "invoke")

  local function rewrite(query)
    local chunk = { rewrite_query = { query = query } }
    if with_cache then chunk.__metadata__ = { cached = true } end
    return chunk
  end
  T.eq(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "updates")), {
    rewrite("query: what is weather in sf"),
    { analyzer_one = { query = "analyzed: query: what is weather in sf" } },
    { retriever_two = { docs = { "doc3", "doc4" } } },
    { retriever_one = { docs = { "doc1", "doc2" } } },
    { decider = sst.null },
    rewrite("query: analyzed: query: what is weather in sf"),
    { analyzer_one = { query = "analyzed: query: analyzed: query: what is weather in sf" } },
    { retriever_two = { docs = { "doc3", "doc4" } } },
    { retriever_one = { docs = { "doc1", "doc2" } } },
    { decider = sst.null },
    { qa = { answer = "doc1,doc1,doc2,doc2,doc3,doc3,doc4,doc4" } },
  }, what .. "stream")
  -- Python: `assert rewrite_query_count == 2 if with_cache else 4`, which
  -- only checks the count with the cache
  if with_cache then T.eq(rewrite_query_count, 2, what .. "rewrite_query calls") end

  -- clear the cache
  if with_cache then
    app:clear_cache()
    T.eq(app:invoke({ query = "what is weather in sf" }), expected, what .. "invoke after clear_cache")
    T.eq(rewrite_query_count, 4, what .. "rewrite_query calls after clear_cache")
  end
end
T.finish()
