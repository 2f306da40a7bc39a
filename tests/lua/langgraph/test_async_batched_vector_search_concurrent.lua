-- langgraph: libs/checkpoint/tests/test_store.py::test_async_batched_vector_search_concurrent
-- script: worker states run this file again (superstep.worker), so it
--   returns its graph before the checks when loaded in one.
-- Python gathers 150 puts and deletes, then 9 searches, as coroutines on one
-- store. Here they are graph tasks run on 4 workers, reaching the store as
-- ctx.store (a superstep of 50 puts, one of 50 deletes, one of 50 puts, one
-- of the 9 searches), so the Lua embed function runs in the worker states.
-- Each state makes its own CharacterEmbeddings; they draw the projections
-- of every character of the test in the same order at load, so all states
-- embed alike.
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local fake_embeddings = S.CharacterEmbeddings(500)
local store = sst.InMemoryStore{ index = { dims = fake_embeddings.dims, embed = fake_embeddings } }

local colors = { "red", "blue", "green", "yellow", "purple" }
local items = { "apple", "car", "house", "book", "phone" }
local scores = { 3.0, 3.5, 4.0, 4.5, 5.0 }
local docs = {}
for i = 0, 49 do
  local color, item, score = colors[i % 5 + 1], items[i % 5 + 1], scores[i % 5 + 1]
  docs[#docs + 1] = { key = "doc" .. i,
                      value = { text = color .. " " .. item, color = color, score = score, index = i } }
end
local search_queries = {
  { "apple", { color = "red" } },
  { "car", { color = "blue" } },
  { "house", { color = "green" } },
  { "phone", { score = { ["$gt"] = 4.99 } } },
  { "book", { score = { ["$lte"] = 3.5 } } },
  { "apple", { score = { ["$gte"] = 3.0 }, color = "red" } },
  { "car", { score = { ["$lt"] = 5.1 }, color = "blue" } },
  { "house", { index = { ["$gt"] = 25 } } },
  { "phone", { index = { ["$lte"] = 10 } } },
}
-- The same projections in every state: every character, in one order.
fake_embeddings:embed_query("abcdefghijklmnopqrstuvwxyz {}[]\":,.0123456789$")

local function sends(node, list)
  local out = {}
  for i, x in ipairs(list) do out[i] = sst.Send(node, { i = i, x = x }) end
  return out
end

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("put", function(_, arg, ctx) ctx.store:put({ "test" }, arg.x.key, arg.x.value) end)
g:add_node("delete", function(_, arg, ctx) ctx.store:delete({ "test" }, arg.x.key) end)
g:add_node("put_again", function(_, arg, ctx) ctx.store:put({ "test" }, arg.x.key, arg.x.value) end)
g:add_node("search", function(_, arg, ctx)
  local found = ctx.store:search({ "test" }, { query = arg.x[1], filter = arg.x[2] })
  local values = {}
  for k, it in ipairs(found) do values[k] = it.value end
  return { results = { { i = arg.i, values = sst.array(values) } } }
end)
for _, n in ipairs{ "after_put", "after_delete", "after_put_again" } do
  g:add_node(n, function() end)
end
g:add_conditional_edges(sst.START, function() return sends("put", docs) end)
g:add_edge("put", "after_put")
g:add_conditional_edges("after_put", function() return sends("delete", docs) end)
g:add_edge("delete", "after_delete")
g:add_conditional_edges("after_delete", function() return sends("put_again", docs) end)
g:add_edge("put_again", "after_put_again")
g:add_conditional_edges("after_put_again", function() return sends("search", search_queries) end)
local graph = g:compile{ store = store, workers = 4 }
if sst.worker then return graph end

local out = graph:invoke({})
T.eq(#out.results, #search_queries, "every search ran")
local ops = {
  ["$gt"] = function(a, b) return a > b end, ["$gte"] = function(a, b) return a >= b end,
  ["$lt"] = function(a, b) return a < b end, ["$lte"] = function(a, b) return a <= b end,
}
for _, r in ipairs(out.results) do
  local query, filter = search_queries[r.i][1], search_queries[r.i][2]
  local what = string.format("query '%s' with filter %s", query, sst.json_encode(filter))
  T.check(#r.values > 0, "No results for " .. what)
  for _, value in ipairs(r.values) do
    if filter.color then T.eq(value.color, filter.color, what .. ": color") end
    for _, field in ipairs{ "score", "index" } do
      for op, bound in pairs(type(filter[field]) == "table" and filter[field] or {}) do
        T.check(ops[op](value[field], bound), string.format("%s: %s %s %s", what, field, op, bound))
      end
    end
  end
end
T.eq(#store:search({ "test" }, { limit = 100 }), 50, "all 50 documents are back")
T.finish()
return graph
