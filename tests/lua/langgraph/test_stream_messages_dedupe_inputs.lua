-- langgraph: test_pregel.py::test_stream_messages_dedupe_inputs
-- `stream(..., stream_mode="messages", subgraphs=True)` yields `namespace, chunk`;
-- a "messages" chunk is the list { message, metadata }.
local sst = superstep
local T = require("checks")

local function messages_graph()
  return sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
end

local sb = messages_graph()
sb:add_node("call_model", function() return { messages = { role = "assistant", content = "hi", id = "1" } } end)
sb:add_node("route", function() return sst.Command{ ["goto"] = "node_2", graph = sst.PARENT } end)
sb:add_edge(sst.START, "call_model")
sb:add_edge("call_model", "route")
local subgraph = sb:compile()

local g = messages_graph()
g:add_node("node_1", subgraph)
g:add_node("node_2", function(state) return state end)
g:add_edge(sst.START, "node_1")
local graph = g:compile()

local chunks = {}
for _, chunk in graph:stream({ messages = "hi" }, nil, "messages", { subgraphs = true }) do
  chunks[#chunks + 1] = chunk
end
T.eq(#chunks, 1, "one chunk")
T.eq(chunks[1] and chunks[1][1], { role = "assistant", content = "hi", id = "1" }, "message")
T.eq(chunks[1] and chunks[1][2].langgraph_node, "call_model", "langgraph_node")
T.finish()
