-- langgraph: test_pregel.py::test_multiple_writes_same_channel_from_same_node
-- `Command(update=[("foo", "one.0"), ...])` is a list of {field, value} pairs.
-- The "tasks" chunks' `triggers` (Python's channel names, "branch:to:one")
-- are left out; the other keys are compared.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{
  foo = {
    reducer = function(a, b)
      local parts = {}
      for _, x in ipairs({ a or "", b or "" }) do if x ~= "" then parts[#parts + 1] = x end end
      return table.concat(parts, ", ")
    end,
    default = "",
  },
}
g:add_node("one", function() return sst.Command{ update = { { "foo", "one.0" }, { "foo", "one.1" } } } end)
g:add_node("two", function() return { foo = "two" } end)
g:add_edge(sst.START, "one")
g:add_edge("one", "two")
g:add_edge("two", sst.END)
local graph = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

local events = lg.collect(graph:stream({ foo = "input" }, config, { "updates", "tasks" }))
for _, e in ipairs(events) do
  if e[1] == "tasks" and type(e[2]) == "table" then
    T.check(lg.any_str(e[2].id), "task event id")
    e[2].id = "ANY"
    e[2].triggers = nil
  end
end
T.eq(events, {
  { "tasks", { id = "ANY", name = "one", input = { foo = "input" } } },
  { "updates", { one = { { foo = "one.0" }, { foo = "one.1" } } } },
  { "tasks", { id = "ANY", name = "one", error = sst.null,
               result = { foo = { ["$writes"] = { "one.0", "one.1" } } }, interrupts = sst.array{} } },
  { "tasks", { id = "ANY", name = "two", input = { foo = "input, one.0, one.1" } } },
  { "updates", { two = { foo = "two" } } },
  { "tasks", { id = "ANY", name = "two", error = sst.null, result = { foo = "two" },
               interrupts = sst.array{} } },
}, "events")

local history = {}
for i, s in ipairs(graph:get_state_history(config)) do
  local tasks = {}
  for j, t in ipairs(s.tasks or {}) do tasks[j] = { name = t.name, result = t.result } end
  history[i] = { tasks = sst.array(tasks), values = s.values }
end
T.eq(history, {
  { tasks = sst.array{}, values = { foo = "input, one.0, one.1, two" } },
  { tasks = { { name = "two", result = { foo = "two" } } }, values = { foo = "input, one.0, one.1" } },
  { tasks = { { name = "one", result = { foo = { ["$writes"] = { "one.0", "one.1" } } } } },
    values = { foo = "input" } },
  { tasks = { { name = "__start__", result = { foo = "input" } } }, values = { foo = "" } },
}, "history")
T.finish()
