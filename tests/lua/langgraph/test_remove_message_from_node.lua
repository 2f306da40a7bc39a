-- langgraph: test_pregel.py::test_remove_message_from_node
-- The Python state schema is the message list itself (a root channel); here
-- it is the one field `messages` (the README maps only dict-shaped states).
-- RemoveMessage(id=X) is { type = "remove", id = X }.
local sst = superstep
local T = require("checks")

local workflow = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
workflow:add_node("chatbot", function()
  return { messages = { { role = "assistant", content = "Hello!" },
                        { role = "assistant", content = "How can I help you?" } } }
end)
workflow:add_node("delete_messages", function(state)
  return { messages = { { type = "remove", id = state.messages[#state.messages - 1].id } } }
end)
workflow:set_entry_point("chatbot")
workflow:add_edge("chatbot", "delete_messages")
workflow:add_edge("delete_messages", sst.END)
local app = workflow:compile()

local output = app:invoke({ messages = { { role = "user", content = "Hi" } } })
T.eq(#output.messages, 2, "two messages")
T.eq(output.messages[#output.messages].content, "How can I help you?", "last message")
T.finish()
