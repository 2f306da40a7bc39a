-- langgraph: test_pregel.py::test_stream_messages_dedupe_state
-- `stream(..., stream_mode="messages", subgraphs=True)` yields `namespace, chunk`;
-- a "messages" chunk is the list { message, metadata }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function messages_graph()
  return sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
end

local to_emit = { { role = "assistant", content = "bye", id = "1" },
                  { role = "assistant", content = "bye again", id = "2" } }

local sb = messages_graph()
sb:add_node("call_model", function() return { messages = table.remove(to_emit, 1) } end)
sb:add_node("route", function() return sst.Command{ ["goto"] = "node_2", graph = sst.PARENT } end)
sb:add_edge(sst.START, "call_model")
sb:add_edge("call_model", "route")
local subgraph = sb:compile()

local g = messages_graph()
g:add_node("node_1", subgraph)
g:add_node("node_2", function(state) return state end)
g:add_edge(sst.START, "node_1")
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local thread1 = lg.thread("1")

for _, case in ipairs({ { "hi", "bye", "1" }, { "hi again", "bye again", "2" } }) do
  local chunks = {}
  for _, chunk in graph:stream({ messages = case[1] }, thread1, "messages", { subgraphs = true }) do
    chunks[#chunks + 1] = chunk
  end
  T.eq(#chunks, 1, case[1] .. ": one chunk")
  T.eq(chunks[1] and chunks[1][1], { role = "assistant", content = case[2], id = case[3] }, case[1] .. ": message")
  T.eq(chunks[1] and chunks[1][2].langgraph_node, "call_model", case[1] .. ": langgraph_node")
end
T.finish()
