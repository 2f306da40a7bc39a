-- langgraph: test_pregel.py::test_reducer_before_first_node
-- Python repeats the test with list[str] twice and Sequence[str]; the three
-- schemas are the same in Lua, so it is written once.
-- HumanMessage(content=...) is { role = "user", content = ... }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function plain(state, what)
  local s = sst.to_table(state)
  for i, m in ipairs(s.messages or {}) do
    T.check(lg.any_str(m.id), what .. ": message " .. i .. " id")
    m.id = nil
  end
  return s
end

local builder = sst.StateGraph{
  hello = sst.reducers.replace,
  messages = { reducer = sst.reducers.add_messages, default = sst.array{} },
}
builder:add_node("a", function(state)
  T.eq(plain(state, "node a"), { hello = "there", messages = { { role = "user", content = "hello" } } },
       "node a state")
end)
builder:set_entry_point("a")
builder:set_finish_point("a")
local graph = builder:compile()
T.eq(plain(graph:invoke({ hello = "there", messages = "hello" }), "invoke"),
     { hello = "there", messages = { { role = "user", content = "hello" } } }, "invoke")
T.finish()
