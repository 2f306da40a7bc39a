-- langgraph: test_pregel.py::test_update_as_input
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function map_snapshot(s)
  return { values = s.values, next = s.next, step = s.metadata and s.metadata.step }
end

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local g = sst.StateGraph{ foo = sst.reducers.replace }
  g:add_node("agent", function() return { foo = "agent" } end)
  g:add_node("tool", function() return { foo = "tool" } end)
  g:add_edge(sst.START, "agent")
  g:add_edge("agent", "tool")
  local graph = g:compile{ checkpointer = sst.MemorySaver() }

  T.eq(graph:invoke({ foo = "input" }, lg.thread("1"), { durability = durability }), { foo = "tool" },
       durability .. ": invoke 1")
  T.eq(graph:invoke({ foo = "input" }, lg.thread("1"), { durability = durability }), { foo = "tool" },
       durability .. ": invoke 2")

  local history = {}
  for i, s in ipairs(graph:get_state_history(lg.thread("1"))) do history[i] = map_snapshot(s) end

  local ok, err = pcall(function()
    graph:bulk_update_state(lg.thread("2"), {
      -- First turn
      { { values = { foo = "input" }, as_node = "__input__" } },
      { { values = { foo = "input" }, as_node = "__start__" } },
      { { values = { foo = "agent" }, as_node = "agent" } },
      { { values = { foo = "tool" }, as_node = "tool" } },
      -- Second turn
      { { values = { foo = "input" }, as_node = "__input__" } },
      { { values = { foo = "input" }, as_node = "__start__" } },
      { { values = { foo = "agent" }, as_node = "agent" } },
      { { values = { foo = "tool" }, as_node = "tool" } },
    })
  end)
  T.check(ok, durability .. ": bulk_update_state: " .. tostring(err))

  T.eq(graph:get_state(lg.thread("2")).values, { foo = "tool" }, durability .. ": thread 2 values")
  local new_history = {}
  for i, s in ipairs(graph:get_state_history(lg.thread("2"))) do new_history[i] = map_snapshot(s) end
  if durability ~= "exit" then
    T.eq(new_history, history, durability .. ": history")
  else
    T.eq({ new_history[1], new_history[5] }, history, durability .. ": history")
  end
end
T.finish()
