-- langgraph: test_messages_state.py::test_remove_all_messages
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

local REMOVE_ALL_MESSAGES = "__remove_all__"

-- The content of each message, its id checked (Python's _AnyIdHumanMessage).
local function any_id(list, what)
  local out = {}
  for i, m in ipairs(list) do
    T.check(lg.any_str(m.id), what .. ": message " .. i .. " id")
    out[i] = { role = m.role, content = m.content }
  end
  return setmetatable(out, getmetatable(sst.array{}))
end

-- simple removal
local left = { { role = "user", content = "Hello" }, { role = "assistant", content = "Hi there!" } }
local right = { { type = "remove", id = REMOVE_ALL_MESSAGES } }
T.eq(add_messages(left, right), sst.array{}, "simple removal")

-- removal and update (i.e., overwriting)
right = { { type = "remove", id = REMOVE_ALL_MESSAGES }, { role = "user", content = "Updated hello" } }
T.eq(any_id(add_messages(left, right), "overwrite"), { { role = "user", content = "Updated hello" } }, "overwrite")

-- test removing preceding messages in the right list
right = {
  { role = "user", content = "Updated hello" },
  { type = "remove", id = REMOVE_ALL_MESSAGES },
  { role = "user", content = "Updated hi there" },
}
T.eq(any_id(add_messages(left, right), "preceding"), { { role = "user", content = "Updated hi there" } },
     "preceding")
T.finish()
