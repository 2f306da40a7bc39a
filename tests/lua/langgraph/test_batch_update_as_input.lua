-- langgraph: test_pregel.py::test_batch_update_as_input
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function map_snapshot(s)
  local tasks = {}
  for i, t in ipairs(s.tasks or {}) do tasks[i] = t.name end
  return { values = s.values, next = s.next, step = s.metadata and s.metadata.step,
           tasks = sst.array(tasks) }
end

local function sends()
  return { sst.Send("task", { index = 0 }), sst.Send("task", { index = 1 }), sst.Send("task", { index = 2 }) }
end

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local g = sst.StateGraph{
    foo = sst.reducers.replace,
    tasks = { reducer = sst.reducers.append, default = sst.array{} },
  }
  g:add_node("agent", function() return { foo = "agent" } end)
  g:add_node("map", function()
    return sst.Command{ ["goto"] = sends(), update = { foo = "map" } }
  end, { ends = { "task" } })
  -- the Send payload ({"index": i}) is the node's input
  g:add_node("task", function(state, input) return { tasks = { input.index } } end)
  g:add_edge(sst.START, "agent")
  g:add_edge("agent", "map")
  local graph = g:compile{ checkpointer = sst.MemorySaver() }

  T.eq(graph:invoke({ foo = "input" }, lg.thread("1"), { durability = durability }),
       { foo = "map", tasks = { 0, 1, 2 } }, durability .. ": invoke")

  local history = {}
  for i, s in ipairs(graph:get_state_history(lg.thread("1"))) do history[i] = map_snapshot(s) end

  local ok, err = pcall(function()
    graph:bulk_update_state(lg.thread("2"), {
      { { values = { foo = "input" }, as_node = "__input__" } },
      { { values = { foo = "input" }, as_node = "__start__" } },
      { { values = { foo = "agent", tasks = sst.array{} }, as_node = "agent" } },
      { { values = sst.Command{ ["goto"] = sends(), update = { foo = "map" } }, as_node = "map" } },
      {
        { values = { tasks = { 0 } }, as_node = "task" },
        { values = { tasks = { 1 } }, as_node = "task" },
        { values = { tasks = { 2 } }, as_node = "task" },
      },
    })
  end)
  T.check(ok, durability .. ": bulk_update_state: " .. tostring(err))

  T.eq(graph:get_state(lg.thread("2")).values, { foo = "map", tasks = { 0, 1, 2 } },
       durability .. ": thread 2 values")
  local new_history = {}
  for i, s in ipairs(graph:get_state_history(lg.thread("2"))) do new_history[i] = map_snapshot(s) end
  if durability ~= "exit" then
    T.eq(new_history, history, durability .. ": history")
  else
    T.eq({ new_history[1] }, history, durability .. ": history[:1]")
  end
end
T.finish()
