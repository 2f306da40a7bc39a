-- langgraph: test_messages_state.py::test_remove_nonexistent_message
-- Messages are superstep's tables ({ role, content, id }): HumanMessage is role
-- "user", AIMessage "assistant", SystemMessage "system", RemoveMessage
-- { type = "remove", id = ... }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

-- add_messages(left, right): sst.reducers.add_messages is not callable from
-- Lua, so the reducer runs in a one-node graph (input = left, update = right).
local function add_messages(left, right)
  local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
  g:add_node("n", function() return { messages = right } end)
  g:add_edge(sst.START, "n")
  g:add_edge("n", sst.END)
  return g:compile():invoke({ messages = left }).messages
end

local left = { { role = "user", content = "Hello", id = "1" } }
local right = { type = "remove", id = "2" }
lg.raises(function() add_messages(left, right) end, "ValueError",
          "Attempting to delete a message with an ID that doesn't exist")
T.finish()
