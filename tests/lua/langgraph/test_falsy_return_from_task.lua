-- langgraph: test_pregel.py::test_falsy_return_from_task
-- AnyStr() is lg.ANY. Left out: the `input` of falsy_task's task event,
-- Python's (args, kwargs) tuple `((), {})` (a Lua task gets its arguments
-- as given; any value is accepted). A task_result's `result` is LangGraph's
-- write: `{__return__ = value}` for a task, `{__end__ = value}` for the
-- entrypoint's return (the graph's output), `{}` when it interrupted.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local ANY = lg.ANY
local function anything() return true end

-- lg.like, also where got lacks a table the expectation has (its
-- predicates then show as "<predicate>" instead of failing json_encode)
local function strip(exp)
  if type(exp) == "function" then return "<predicate>" end
  if type(exp) ~= "table" then return exp end
  local e = {}
  for k, v in pairs(exp) do e[k] = strip(v) end
  return setmetatable(e, getmetatable(exp))
end
local function norm(got, exp)
  if type(exp) == "function" then
    if exp(got) then return "<any>", "<any>" end
    return got, "<predicate>"
  end
  if type(exp) == "table" and type(got) == "table" then
    local g, e = {}, {}
    for k, v in pairs(got) do g[k] = v end
    for k, v in pairs(exp) do g[k], e[k] = norm(got[k], v) end
    setmetatable(e, getmetatable(exp)); setmetatable(g, getmetatable(got))
    return g, e
  end
  return got, strip(exp)
end
local function like(got, exp, what)
  local g, e = norm(got, exp)
  T.eq(g, e, what)
end

local falsy_task = sst.task("falsy_task", function() return false end)

local graph = sst.entrypoint{ name = "graph", checkpointer = sst.MemorySaver() }(function(state)
  falsy_task():result()
  sst.interrupt("test")
end)

local configurable = lg.thread("5b1c7f0e-3f9a-4a57-9a43-6f1b2d8c9e01")

local function config()
  return { configurable = { checkpoint_id = ANY, checkpoint_ns = "", thread_id = ANY } }
end

local got = {}
for chunk in graph:stream({ a = 5 }, configurable, { stream_mode = "debug", durability = "exit" }) do
  got[#got + 1] = sst.to_table(chunk)
end
like(got, {
  {
    payload = {
      config = config(),
      metadata = { parents = sst.object{}, source = "input", step = -1 },
      next = { "graph" },
      parent_config = sst.null,
      tasks = { { id = ANY, interrupts = sst.array{}, name = "graph", state = sst.null } },
      values = sst.null,
    },
    step = -1,
    timestamp = ANY,
    type = "checkpoint",
  },
  {
    payload = { id = ANY, input = { a = 5 }, name = "graph", triggers = { "__start__" } },
    step = 0,
    timestamp = ANY,
    type = "task",
  },
  {
    payload = { id = ANY, input = anything, name = "falsy_task", triggers = { "__pregel_push" } },
    step = 0,
    timestamp = ANY,
    type = "task",
  },
  {
    payload = { error = sst.null, id = ANY, interrupts = sst.array{}, name = "falsy_task",
                result = { __return__ = false } },
    step = 0,
    timestamp = ANY,
    type = "task_result",
  },
  {
    payload = { error = sst.null, id = ANY, interrupts = { { id = ANY, value = "test" } }, name = "graph",
                result = sst.object{} },
    step = 0,
    timestamp = ANY,
    type = "task_result",
  },
}, "first run")

got = {}
for chunk in graph:stream(sst.Command{ resume = "123" }, configurable,
                          { stream_mode = "debug", durability = "exit" }) do
  got[#got + 1] = sst.to_table(chunk)
end
like(got, {
  {
    payload = {
      config = config(),
      metadata = { parents = sst.object{}, source = "input", step = -1 },
      next = { "graph" },
      parent_config = sst.null,
      tasks = { { id = ANY, interrupts = { { id = ANY, value = "test" } }, name = "graph", state = sst.null } },
      values = sst.null,
    },
    step = -1,
    timestamp = ANY,
    type = "checkpoint",
  },
  {
    payload = { id = ANY, input = { a = 5 }, name = "graph", triggers = { "__start__" } },
    step = 0,
    timestamp = ANY,
    type = "task",
  },
  {
    payload = { id = ANY, input = anything, name = "falsy_task", triggers = { "__pregel_push" } },
    step = 0,
    timestamp = ANY,
    type = "task",
  },
  {
    payload = { error = sst.null, id = ANY, interrupts = sst.array{}, name = "graph",
                result = { __end__ = sst.null } },
    step = 0,
    timestamp = ANY,
    type = "task_result",
  },
  {
    payload = {
      config = config(),
      metadata = { parents = sst.object{}, source = "loop", step = 0 },
      next = sst.array{},
      parent_config = sst.null,
      tasks = sst.array{},
      values = sst.null,
    },
    step = 0,
    timestamp = ANY,
    type = "checkpoint",
  },
}, "resume")
T.finish()
