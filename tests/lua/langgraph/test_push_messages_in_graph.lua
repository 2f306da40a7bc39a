-- langgraph: test_messages_state.py::test_push_messages_in_graph
-- push_message(msg) is written sst.push_message(msg) (like sst.interrupt); a
-- "messages" chunk is { message, metadata } as in Python.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
g:add_node("chat", function()
  lg.raises(function() sst.push_message({ role = "assistant", content = "No ID" }) end,
            "ValueError", "Message ID is required")
  sst.push_message({ role = "assistant", content = "First", id = "1" })
  sst.push_message({ role = "user", content = "Second", id = "2" })
  sst.push_message({ role = "assistant", content = "Third", id = "3" })
end)
g:add_edge(sst.START, "chat")
local app = g:compile()

local messages, values = {}, nil
for event, chunk in app:stream({ messages = sst.array{} }, nil, { "messages", "values" }) do
  if event == "values" then
    values = chunk
  elseif event == "messages" then
    messages[#messages + 1] = chunk[1]
  end
end
T.eq(values and values.messages, messages, "values.messages == pushed messages")
T.finish()
