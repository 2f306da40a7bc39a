-- langgraph: test_pregel.py::test_stream_mode_messages_command
-- A "messages" chunk is LangGraph's (message, metadata) tuple: the list
-- { message, metadata }. HumanMessage(content=...) is { role = "user", content = ... }.
-- Left out of the metadata: langgraph_triggers and langgraph_path (Python's
-- Pregel channel names), langgraph_checkpoint_ns (the task namespace string)
-- and ls_integration (tracing).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
g:add_sequence{
  { "my_node", function() return { messages = { role = "user", content = "foo" } } end },
  { "my_other_node", function()
      return sst.Command{ update = { messages = { role = "user", content = "bar" } } }
    end },
  { "my_last_node", function()
      return { sst.Command{ update = { messages = { role = "user", content = "baz" } } } }
    end },
}
g:add_edge(sst.START, "my_node")
local graph = g:compile()

local chunks = lg.collect(graph:stream({ messages = sst.array{} }, nil, "messages"))
local expected = { { "foo", 1, "my_node" }, { "bar", 2, "my_other_node" }, { "baz", 3, "my_last_node" } }
T.eq(#chunks, #expected, "chunk count")
for i, e in ipairs(expected) do
  local c = chunks[i]
  if c then
    local msg, meta = c[1], c[2] or {}
    T.check(type(msg) == "table" and lg.any_str(msg.id), "chunk " .. i .. ": message id")
    T.eq({ role = msg.role, content = msg.content }, { role = "user", content = e[1] },
         "chunk " .. i .. ": message")
    T.eq({ langgraph_step = meta.langgraph_step, langgraph_node = meta.langgraph_node },
         { langgraph_step = e[2], langgraph_node = e[3] }, "chunk " .. i .. ": metadata")
  end
end
T.finish()
