-- langgraph: test_pregel.py::test_remove_message_via_state_update
-- The Python state schema is the message list itself (a root channel); here
-- it is the one field `messages` (the README maps only dict-shaped states).
-- Messages are superstep's OpenAI-shaped objects; RemoveMessage(id=X) is
-- { type = "remove", id = X }. `checkpointer.get_tuple(config) is None` is
-- checked as an empty history.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local workflow = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
workflow:add_node("chatbot", function()
  return { messages = { { role = "assistant", content = "Hello! How can I help you" } } }
end)
workflow:set_entry_point("chatbot")
workflow:add_edge("chatbot", sst.END)
local saver = sst.MemorySaver()
local app = workflow:compile{ checkpointer = saver }
local config = lg.thread("1")

local output = app:invoke({ messages = { { role = "user", content = "Hi" } } }, config)
app:update_state(config, { messages = { { type = "remove", id = output.messages[#output.messages].id } } })
local updated = app:get_state(config)
T.eq(#updated.values.messages, 1, "one message left")
T.eq(updated.values.messages[#updated.values.messages].content, "Hi", "the human message")

saver:delete_thread(config.configurable.thread_id)
T.eq(app:get_state_history(config), sst.array{}, "history after delete_thread")
T.finish()
