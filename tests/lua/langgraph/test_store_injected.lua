-- langgraph: test_pregel.py::test_store_injected
-- The injected `store` argument is `ctx.store` (put/get/search as in
-- LangGraph's BaseStore, namespaces as lists). `graph.batch` of M = 1 input
-- is one invoke. uuid4 values are random strings made in Lua.
local sst = superstep
local T = require("checks")
local lg = require("lg")

math.randomseed(os.time())
local function uuid()
  return (string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]", function(c)
    local v = c == "x" and math.random(0, 15) or math.random(8, 11)
    return string.format("%x", v)
  end))
end

local doc_id = uuid()
local doc = { ["some-key"] = "this-is-a-val" }
local uid = uuid():gsub("-", "")
local namespace = { "foo-" .. uid, "bar" }
local thread_1 = uuid()
local thread_2 = uuid()

local function with(t, extra)
  local out = {}
  for k, v in pairs(t) do out[k] = v end
  for k, v in pairs(extra) do out[k] = v end
  return out
end

local function Node(i)
  return function(inputs, _, ctx)
    T.check(ctx.store ~= nil, "store injected")
    local thread_id = ctx.config.configurable.thread_id
    local ns = namespace
    if i == nil or (thread_id ~= thread_1 and thread_id ~= thread_2) then
      ns = { "foo_" .. (i ~= nil and tostring(i) or "None"), "bar" }
    end
    ctx.store:put(ns, doc_id, with(doc, { from_thread = thread_id, some_val = inputs.count }))
    return { count = 1 }
  end
end

local builder = sst.StateGraph{ count = { reducer = sst.reducers.sum, default = 0 } }
builder:add_node("node", Node())
builder:add_edge("__start__", "node")
local N = 50
for i = 0, N - 1 do
  builder:add_node("node_" .. i, Node(i))
  builder:add_edge("__start__", "node_" .. i)
end
local store = sst.InMemoryStore()
local graph = builder:compile{ store = store, checkpointer = sst.MemorySaver() }

local result = graph:invoke({ count = 0 }, lg.thread(thread_1))
T.eq(result, { count = N + 1 }, "batch result")
T.eq(store:get(namespace, doc_id).value, with(doc, { from_thread = thread_1, some_val = 0 }), "doc 1")
T.eq(#store:search(namespace), 1, "search 1")

result = graph:invoke({ count = 0 }, lg.thread(thread_1))
T.eq(result, { count = (N + 1) * 2 }, "second turn")
T.eq(store:get(namespace, doc_id).value, with(doc, { from_thread = thread_1, some_val = N + 1 }), "doc 2")
T.eq(#store:search(namespace), 1, "search 2")

result = graph:invoke({ count = 0 }, lg.thread(thread_2))
T.eq(result, { count = N + 1 }, "thread 2")
T.eq(store:get(namespace, doc_id).value, with(doc, { from_thread = thread_2, some_val = 0 }), "doc 3")
T.eq(#store:search(namespace), 1, "search 3")
T.finish()
