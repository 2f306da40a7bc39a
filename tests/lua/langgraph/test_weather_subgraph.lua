-- langgraph: test_large_cases.py::test_weather_subgraph
-- deliberate: the updates stream shows a node's writes as it returned them with the
--   ids add_messages gave its messages, and keys a closed state drops (as for
--   test_state_graph_packets); LangGraph leaves the ids out of returned dicts
--   (it fills them into message objects only; Lua has tables alone) and here drops
--   the subgraph result's "city", which the parent state does not declare.
-- The states (MessagesState subclasses, TypedDicts) are closed schemas: LangGraph drops
-- undeclared keys.
-- The drawing snapshot and the two "messages" stream-mode runs (chunks of
-- LangChain chat-model callbacks with ls_provider/lc_versions metadata) are
-- left out. The fake chat models are their single scripted reply inlined;
-- StreamWriter is ctx.emit. stream(..., subgraphs=True) is stream(x, config,
-- mode, { subgraphs = true, ... }), yielding `namespace, chunk`.
-- AnyStr()/AnyStr(prefix)/AnyDict() are the predicates ANY, prefix(...) and
-- ANY_MAP compared by like().
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = lg.PULL

local like, ANY, prefix, ANY_MAP = lg.like, lg.ANY, lg.prefix, lg.ANY_MAP
local snap, Snapshot, Task, root_config = lg.snap, lg.Snapshot, lg.Task, lg.root_config
local ANY_ID_HUMAN = function(content)
  return { role = "user", content = content, id = ANY }
end
local ANY_ID_AI = function(content)
  return { role = "assistant", content = content, id = ANY }
end

-- setup subgraph
local function get_weather(city) return "I'ts sunny in " .. city .. "!" end

local function model_node(state, input, ctx)
  ctx.emit(" very")
  local result = { role = "assistant", content = "",
                   tool_calls = { { id = "tool_call123", name = "get_weather", args = { city = "San Francisco" } } } }
  return { city = result.tool_calls[1].args.city }
end

local function weather_node(state, input, ctx)
  ctx.emit(" good")
  local result = get_weather(state.city)
  return { messages = { { role = "assistant", content = result } } }
end

local messages = { reducer = sst.reducers.add_messages, default = sst.array{} }
local subgraph = sst.StateGraph({ messages = messages, city = sst.reducers.replace }, { closed = true })
subgraph:add_node("model_node", model_node)
subgraph:add_node("weather_node", weather_node)
subgraph:add_edge(sst.START, "model_node")
subgraph:add_edge("model_node", "weather_node")
subgraph:add_edge("weather_node", sst.END)
subgraph = subgraph:compile{ interrupt_before = { "weather_node" } }

-- setup main graph
local function router_node(state, input, ctx)
  ctx.emit("I'm")
  local route = { role = "assistant", content = "",
                  tool_calls = { { id = "tool_call123", name = "router", args = { dest = "weather" } } } }
  return { route = route.tool_calls[1].args.dest }
end

local function normal_llm_node(state) return { messages = { { role = "assistant", content = "Hello!" } } } end

local function route_after_prediction(state)
  if state.route == "weather" then return "weather_graph" end
  return "normal_llm_node"
end

-- subgraph.invoke(state) called inside the node (SubGraphState's fields only)
local function weather_graph(state)
  return subgraph:invoke({ messages = state.messages })
end

local graph = sst.StateGraph({ messages = messages, route = sst.reducers.replace }, { closed = true })
graph:add_node("router_node", router_node)
graph:add_node("normal_llm_node", normal_llm_node)
graph:add_node("weather_graph", weather_graph)
graph:add_edge(sst.START, "router_node")
graph:add_conditional_edges("router_node", route_after_prediction, { "weather_graph", "normal_llm_node" })
graph:add_edge("normal_llm_node", sst.END)
graph:add_edge("weather_graph", sst.END)
graph = graph:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local thread2 = lg.thread("2")
local inputs = { messages = { { role = "user", content = "what's the weather in sf" } } }

-- run with custom output
like(lg.collect(graph:stream(inputs, thread2, "custom", { subgraphs = true })), {
  { sst.array{}, "I'm" },
  { { prefix("weather_graph:") }, " very" },
}, "custom 1")
like(lg.collect(graph:stream(nil, thread2, "custom", { subgraphs = true })), {
  { { prefix("weather_graph:") }, " good" },
}, "custom 2")

-- run until interrupt
like(lg.collect(graph:stream(inputs, config, "updates", { subgraphs = true, durability = "exit" })), {
  { sst.array{}, { router_node = { route = "weather" } } },
  { { prefix("weather_graph:") }, { model_node = { city = "San Francisco" } } },
  { sst.array{}, { __interrupt__ = sst.array{} } },
}, "updates 1")

-- check current state
local state = graph:get_state(config)
like(snap(state), Snapshot{
  values = { messages = { ANY_ID_HUMAN("what's the weather in sf") }, route = "weather" },
  next = { "weather_graph" },
  config = root_config("1"),
  metadata = { source = "loop", step = 1, parents = sst.object{} },
  parent_config = nil,
  tasks = { Task("weather_graph", { PULL, "weather_graph" },
                 { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("weather_graph:") } } }) },
}, "state 1")

-- update
graph:update_state(state.tasks[1].state, { city = "la" })

-- run after update
like(lg.collect(graph:stream(nil, config, "updates", { subgraphs = true })), {
  { { prefix("weather_graph:") }, { weather_node = { messages = { ANY_ID_AI("I'ts sunny in la!") } } } },
  { sst.array{}, { weather_graph = { messages = { ANY_ID_HUMAN("what's the weather in sf"),
                                                  ANY_ID_AI("I'ts sunny in la!") }, city = "la" } } },
}, "updates 2")

-- try updating acting as weather node
config = lg.thread("14")
like(lg.collect(graph:stream(inputs, config, "updates", { subgraphs = true, durability = "exit" })), {
  { sst.array{}, { router_node = { route = "weather" } } },
  { { prefix("weather_graph:") }, { model_node = { city = "San Francisco" } } },
  { sst.array{}, { __interrupt__ = sst.array{} } },
}, "updates 3")
local sub_config = { configurable = { thread_id = "14", checkpoint_ns = prefix("weather_graph:"), checkpoint_id = ANY,
                                      checkpoint_map = ANY_MAP } }
state = graph:get_state(config, { subgraphs = true })
like(snap(state), Snapshot{
  values = { messages = { ANY_ID_HUMAN("what's the weather in sf") }, route = "weather" },
  next = { "weather_graph" },
  config = root_config("14"),
  metadata = { source = "loop", step = 1, parents = sst.object{} },
  parent_config = nil,
  tasks = { Task("weather_graph", { PULL, "weather_graph" }, { state = Snapshot{
    values = { messages = { ANY_ID_HUMAN("what's the weather in sf") }, city = "San Francisco" },
    next = { "weather_node" },
    config = sub_config,
    metadata = { source = "loop", step = 1, parents = { [""] = ANY } },
    parent_config = nil,
    tasks = { Task("weather_node", { PULL, "weather_node" }) },
  } }) },
}, "state 14")
graph:update_state(state.tasks[1].state.config, { messages = { { role = "assistant", content = "rainy" } } },
                   "weather_node")
state = graph:get_state(config, { subgraphs = true })
like(snap(state), Snapshot{
  values = { messages = { ANY_ID_HUMAN("what's the weather in sf") }, route = "weather" },
  next = { "weather_graph" },
  config = root_config("14"),
  metadata = { source = "loop", step = 1, parents = sst.object{} },
  parent_config = nil,
  tasks = { Task("weather_graph", { PULL, "weather_graph" }, { state = Snapshot{
    values = { messages = { ANY_ID_HUMAN("what's the weather in sf"), ANY_ID_AI("rainy") }, city = "San Francisco" },
    next = sst.array{},
    config = sub_config,
    metadata = { step = 2, source = "update", parents = { [""] = ANY } },
    parent_config = sub_config,
    tasks = sst.array{},
  } }) },
}, "state 14 after update")
like(lg.collect(graph:stream(nil, config, "updates", { subgraphs = true })), {
  { sst.array{}, { weather_graph = { messages = { ANY_ID_HUMAN("what's the weather in sf"), ANY_ID_AI("rainy") },
                                     city = "San Francisco" } } },
}, "updates 4")

-- run with custom output, without subgraph streaming, should omit subgraph chunks
T.eq(lg.collect(graph:stream(inputs, lg.thread("3"), "custom")), { "I'm" }, "custom without subgraphs")
T.finish()
