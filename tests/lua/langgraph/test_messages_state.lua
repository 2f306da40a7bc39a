-- langgraph: test_messages_state.py::test_messages_state
-- Only the MessagesState (TypedDict) variant; the pydantic one is left out.
-- Messages are superstep's tables: HumanMessage is { role = "user", ... }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
g:add_edge(sst.START, "foo")
g:add_edge("foo", sst.END)
g:add_node("foo", function() return { messages = { { role = "user", content = "foo" } } } end)
local app = g:compile()

local out = app:invoke({ messages = { { "user", "meow" } } })
-- _AnyIdHumanMessage: any id, the rest compared
local got = {}
for i, m in ipairs(out.messages) do
  T.check(lg.any_str(m.id), "message " .. i .. " id")
  got[i] = { role = m.role, content = m.content }
end
T.eq({ messages = got }, { messages = { { role = "user", content = "meow" }, { role = "user", content = "foo" } } },
     "invoke")
T.finish()
