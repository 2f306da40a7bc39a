-- langgraph: test_messages_state.py::test_duplicates_in_input
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

local left = sst.array{}
local right = {
  { role = "assistant", id = "1", content = "Hi there!" },
  { role = "assistant", id = "1", content = "Hi there again!" },
}
local result = add_messages(left, right)
T.eq(#result, 1, "len")
T.eq(result[1].id, "1", "id")
T.eq(result[1].content, "Hi there again!", "content")
T.finish()
