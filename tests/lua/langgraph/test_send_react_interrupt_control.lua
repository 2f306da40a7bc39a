-- langgraph: test_large_cases.py::test_send_react_interrupt_control
-- The drawing snapshot is left out. Messages are superstep's tables
-- (HumanMessage: role "user", AIMessage: role "assistant", ToolMessage: role
-- "tool"); tool calls keep LangChain's { name, args, id, type }. The
-- ToolCall's id=AnyStr() is the empty string (AnyStr's value), so the
-- ToolMessage's tool_call_id is "" too. str(call["args"]) is Python's repr of
-- the args, built by pyrepr below. AIMessage's default tool_calls=[] is
-- written out in the expected messages.
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PUSH = "__pregel_push"

local function pyrepr(v)
  if type(v) == "table" or type(v) == "userdata" then
    v = sst.to_table(v)
    if #v > 0 then
      local parts = {}
      for i, x in ipairs(v) do parts[i] = pyrepr(x) end
      return "[" .. table.concat(parts, ", ") .. "]"
    end
    local keys, parts = {}, {}
    for k in pairs(v) do keys[#keys + 1] = k end
    table.sort(keys)
    for i, k in ipairs(keys) do parts[i] = "'" .. k .. "': " .. pyrepr(v[k]) end
    return "{" .. table.concat(parts, ", ") .. "}"
  end
  return tostring(v)
end

-- _AnyId*Message: the id is checked and dropped (ids listed in `keep` are compared).
local function any_id(messages, what, keep)
  local out = {}
  for i, m in ipairs(messages or {}) do
    T.check(lg.any_str(m.id), what .. ": message " .. i .. " id")
    local c = {}
    for k, v in pairs(m) do if k ~= "id" or (keep and keep[i]) then c[k] = v end end
    out[i] = c
  end
  return out
end
local function result(out, what, keep)
  return { messages = any_id(out and out.messages, what, keep) }
end

-- got == StateSnapshot(...), with AnyStr() for checkpoint ids, created_at and task ids.
local function snap_eq(got, exp, what)
  local cfg = got.config and got.config.configurable or {}
  T.check(lg.any_str(cfg.checkpoint_id), what .. ": checkpoint_id")
  T.check(lg.any_str(got.created_at), what .. ": created_at")
  local pcfg = got.parent_config and got.parent_config.configurable or {}
  local tasks = {}
  for i, t in ipairs(got.tasks or {}) do
    T.check(lg.any_str(t.id), what .. ": task " .. i .. " id")
    tasks[i] = { name = t.name, path = t.path, error = t.error, interrupts = t.interrupts,
                 state = t.state, result = t.result }
  end
  local exp_parent = nil
  if exp.parent_config then
    T.check(lg.any_str(pcfg.checkpoint_id), what .. ": parent checkpoint_id")
    exp_parent = { configurable = { thread_id = exp.thread_id, checkpoint_ns = "", checkpoint_id = pcfg.checkpoint_id } }
  end
  T.eq({ values = result(got.values, what), next = got.next, tasks = tasks, metadata = got.metadata,
         config = got.config, parent_config = got.parent_config, interrupts = got.interrupts },
       { values = exp.values, next = exp.next, tasks = exp.tasks, metadata = exp.metadata,
         config = { configurable = { thread_id = exp.thread_id, checkpoint_ns = "", checkpoint_id = cfg.checkpoint_id } },
         parent_config = exp_parent, interrupts = sst.array{} }, what)
end

local function human(content) return { role = "user", content = content } end
local function ai(content, tool_calls) return { role = "assistant", content = content, tool_calls = tool_calls } end
local function tool_msg(content, tool_call_id) return { role = "tool", content = content, tool_call_id = tool_call_id } end
local function tool_call(args, id) return { name = "foo", args = args, id = id, type = "tool_call" } end

local ai_message = { role = "assistant", content = "", id = "ai1",
                     tool_calls = { tool_call({ hi = { 1, 2, 3 } }, "") } }

-- agent(state) -> Command[Literal["foo"]]: the Literal is ends = { "foo" }
local function agent(state)
  local sends = {}
  for i, call in ipairs(ai_message.tool_calls) do sends[i] = sst.Send(call.name, call) end
  return sst.Command{ update = { messages = ai_message }, ["goto"] = sends }
end

local foo_called = 0
local function foo(state, call)
  foo_called = foo_called + 1
  return { messages = { role = "tool", content = pyrepr(call.args), tool_call_id = call.id } }
end

local builder = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
builder:add_node("agent", agent, { ends = { "foo" } })
builder:add_node("foo", foo)
builder:add_edge(sst.START, "agent")
local graph = builder:compile()

local called = ai("", { tool_call({ hi = { 1, 2, 3 } }, "") })
T.eq(result(graph:invoke({ messages = { human("hello") } }), "invoke"),
     { messages = { human("hello"), called, tool_msg("{'hi': [1, 2, 3]}", "") } }, "invoke")
T.eq(foo_called, 1, "foo_called")

-- simple interrupt-resume flow
foo_called = 0
graph = builder:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "foo" } }
local thread1 = lg.thread("1")
T.eq(result(graph:invoke({ messages = { human("hello") } }, thread1), "thread 1"),
     { messages = { human("hello"), called } }, "thread 1: invoke")
T.eq(foo_called, 0, "thread 1: foo_called")
T.eq(result(graph:invoke(nil, thread1), "thread 1 resume"),
     { messages = { human("hello"), called, tool_msg("{'hi': [1, 2, 3]}", "") } }, "thread 1: resume")
T.eq(foo_called, 1, "thread 1: foo_called after resume")

-- interrupt-update-resume flow
foo_called = 0
graph = builder:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "foo" } }
thread1 = lg.thread("2")
T.eq(result(graph:invoke({ messages = { human("hello") } }, thread1, { durability = "exit" }), "thread 2"),
     { messages = { human("hello"), called } }, "thread 2: invoke")
T.eq(foo_called, 0, "thread 2: foo_called")

-- get state should show the pending task
local pending_foo = { { name = "foo", path = { PUSH, 0, false }, interrupts = sst.array{} } }
snap_eq(graph:get_state(thread1), {
  values = { messages = { human("hello"), called } }, next = { "foo" }, thread_id = "2",
  metadata = { step = 1, source = "loop", parents = sst.object{} }, parent_config = false,
  tasks = pending_foo,
}, "thread 2: state")

-- remove the tool call, clearing the pending task
graph:update_state(thread1, { messages = { role = "assistant", content = "Bye now", id = "ai1", tool_calls = sst.array{} } })

-- tool call no longer in pending tasks
snap_eq(graph:get_state(thread1), {
  values = { messages = { human("hello"), ai("Bye now", sst.array{}) } }, next = sst.array{}, thread_id = "2",
  metadata = { step = 2, source = "update", parents = sst.object{} }, parent_config = true,
  tasks = sst.array{},
}, "thread 2: state after update")

-- tool call not executed
T.eq(result(graph:invoke(nil, thread1), "thread 2 resume"),
     { messages = { human("hello"), ai("Bye now", sst.array{}) } }, "thread 2: resume")
T.eq(foo_called, 0, "thread 2: foo_called after resume")

-- interrupt-update-resume flow, creating new Send in update call

-- TODO add here test with invoke(Command())  (as in the Python test)
T.finish()
