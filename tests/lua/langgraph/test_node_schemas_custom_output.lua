-- langgraph: test_pregel.py::test_node_schemas_custom_output
-- Python infers each node's input schema from its type hint (StateForA,
-- StateForB, StateForC); here it is given as the node option input_schema
-- (LangGraph's add_node(input_schema=)). Python builds the same graph twice;
-- it is built once here.
local sst = superstep
local T = require("checks")
local lg = require("lg")

-- `state` as a plain table, with each message's id checked and dropped.
local function plain(state, what)
  local s = sst.to_table(state)
  for i, m in ipairs(s.messages or {}) do
    T.check(lg.any_str(m.id), what .. ": message " .. i .. " id")
    m.id = nil
  end
  return s
end

local function node_a(state)
  T.eq(plain(state, "a"), { hello = "there", messages = { { role = "user", content = "hello" } } }, "node a state")
end
local function node_b(state)
  T.eq(plain(state, "b"), { bye = "world" }, "node b state")
  return { now = 123, hello = "again" }
end
local function node_c(state)
  T.eq(plain(state, "c"), { hello = "again", now = 123 }, "node c state")
end

-- LangGraph adds the fields of node input schemas (`now`) as channels, while
-- the graph's input schema stays State: here `now` is declared and the input
-- schema names State's fields.
local builder = sst.StateGraph({
  hello = sst.reducers.replace,
  bye = sst.reducers.replace,
  now = sst.reducers.replace,
  messages = { reducer = sst.reducers.add_messages, default = sst.array{} },
}, { input_schema = { "hello", "bye", "messages" }, output_schema = { "messages" } })
builder:add_node("a", node_a, { input_schema = { "hello", "messages" } })
builder:add_node("b", node_b, { input_schema = { "bye", "now" } })
builder:add_node("c", node_c, { input_schema = { "hello", "now" } })
builder:add_edge(sst.START, "a")
builder:add_edge("a", "b")
builder:add_edge("b", "c")
local graph = builder:compile()

T.eq(plain(graph:invoke({ hello = "there", bye = "world", messages = "hello" }), "invoke 1"),
     { messages = { { role = "user", content = "hello" } } }, "invoke 1")

-- "now" = 345 is ignored because it is not in the input schema
T.eq(plain(graph:invoke({ hello = "there", bye = "world", messages = "hello", now = 345 }), "invoke 2"),
     { messages = { { role = "user", content = "hello" } } }, "invoke 2")

T.eq(lg.collect(graph:stream({ hello = "there", bye = "world", messages = "hello", now = 345 }, nil, "updates")),
     { { a = sst.null }, { b = { hello = "again", now = 123 } }, { c = sst.null } }, "stream")
T.finish()
