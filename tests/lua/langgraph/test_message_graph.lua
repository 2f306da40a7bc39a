-- langgraph: test_large_cases.py::test_message_graph
-- The Python state is the message list itself (StateGraph(Annotated[list,
-- add_messages])); here it is the one field `messages` (the README maps only
-- dict-shaped states), so an update `msg` is { messages = msg } and a value
-- `[...]` is { messages = {...} }. FakeFunctionChatModel is a Lua node
-- returning the scripted AIMessages in turn (cycling like the fake model);
-- ToolNode is a node answering the last message's tool calls. Inputs given
-- as a string or a ("human", text) tuple are written as the user message.
-- The JSON-schema, graph JSON and drawing snapshots are left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = "__pregel_pull"

local function task(name) return { name = name, path = { PULL, name }, interrupts = sst.array{} } end

-- _AnyId*Message: user, tool and id-less assistant messages have their id checked and dropped.
local function any_id(list, what)
  local out = {}
  for i, m in ipairs(list) do
    if m.role == "user" or m.role == "tool" or (m.role == "assistant" and not tostring(m.id):match("^ai%d$")) then
      T.check(lg.any_str(m.id), what .. ": message " .. i .. " id")
      local c = {}
      for k, v in pairs(m) do if k ~= "id" then c[k] = v end end
      out[i] = c
    else
      out[i] = m
    end
  end
  return out
end

-- got == StateSnapshot(...), with AnyStr() for checkpoint_id, created_at and task ids.
local function snap_eq(got, exp, what)
  local cfg = got.config and got.config.configurable or {}
  T.check(lg.any_str(cfg.checkpoint_id), what .. ": checkpoint_id")
  T.check(lg.any_str(got.created_at), what .. ": created_at")
  local tasks = {}
  for i, t in ipairs(got.tasks or {}) do
    T.check(lg.any_str(t.id), what .. ": task " .. i .. " id")
    tasks[i] = { name = t.name, path = t.path, error = t.error, interrupts = t.interrupts,
                 state = t.state, result = t.result }
  end
  local values = got.values and { messages = any_id(got.values.messages or {}, what) }
  T.eq({ values = values, next = got.next, tasks = tasks, metadata = got.metadata,
         config = got.config, parent_config = got.parent_config, interrupts = got.interrupts },
       { values = { messages = exp.values }, next = exp.next, tasks = exp.tasks, metadata = exp.metadata,
         config = exp.config or { configurable = { thread_id = exp.thread_id, checkpoint_ns = "",
                                                   checkpoint_id = cfg.checkpoint_id } },
         parent_config = exp.parent_config, interrupts = sst.array{} }, what)
end

local function human(content) return { role = "user", content = content } end
local function ai(id, content, tool_calls) return { role = "assistant", id = id, content = content, tool_calls = tool_calls } end
local function tool_msg(content, call_id) return { role = "tool", content = content, name = "search_api", tool_call_id = call_id } end
local function call(id, query) return { { id = id, name = "search_api", args = { query = query } } } end

local responses = {
  ai("ai1", "", call("tool_call123", "query")),
  ai("ai2", "", call("tool_call456", "another")),
  ai("ai3", "answer"),
}
local model_i = 0
local function model()
  local r = responses[model_i + 1]
  model_i = (model_i + 1) % #responses
  return { messages = r }
end

local tools = { search_api = function(args) return "result for " .. args.query end }
local function tool_node(state)
  local last = state.messages[#state.messages]
  local out = {}
  for _, c in ipairs(last.tool_calls) do
    out[#out + 1] = { role = "tool", content = tools[c.name](c.args), name = c.name, tool_call_id = c.id }
  end
  return { messages = out }
end

local function should_continue(state)
  local last_message = state.messages[#state.messages]
  if last_message.tool_calls == nil or #last_message.tool_calls == 0 then return "end" end
  return "continue"
end

local workflow = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
workflow:add_node("agent", model)
workflow:add_node("tools", tool_node)
workflow:set_entry_point("agent")
workflow:add_conditional_edges("agent", should_continue, { continue = "tools", ["end"] = sst.END })
workflow:add_edge("tools", "agent")
local app = workflow:compile()

local out = app:invoke({ messages = { human("what is weather in sf") } })
T.eq(any_id(out.messages, "invoke"), {
  human("what is weather in sf"),
  ai("ai1", "", call("tool_call123", "query")),
  tool_msg("result for query", "tool_call123"),
  ai("ai2", "", call("tool_call456", "another")),
  tool_msg("result for another", "tool_call456"),
  ai("ai3", "answer"),
}, "invoke")

-- an updates chunk, tool messages' ids checked and dropped
local function chunks(list, what)
  local res = {}
  for i, c in ipairs(list) do
    local node, upd = next(c)
    if node == "tools" and type(upd) == "table" and upd.messages then
      res[i] = { tools = { messages = any_id(upd.messages, what) } }
    else
      res[i] = c
    end
  end
  return res
end

T.eq(chunks(lg.collect(app:stream({ messages = { human("what is weather in sf") } }, nil, "updates")), "stream"), {
  { agent = { messages = ai("ai1", "", call("tool_call123", "query")) } },
  { tools = { messages = { tool_msg("result for query", "tool_call123") } } },
  { agent = { messages = ai("ai2", "", call("tool_call456", "another")) } },
  { tools = { messages = { tool_msg("result for another", "tool_call456") } } },
  { agent = { messages = ai("ai3", "answer") } },
}, "stream")

local INTERRUPT = { __interrupt__ = sst.array{} }
local function parent_of(app_, config) return app_:get_state_history(config, { limit = 2 })[2].config end
local different = ai("ai1", "", call("tool_call123", "a different query"))

local variants = {
  { thread = "1", opts = { interrupt_after = { "agent" } } },
  { thread = "2", opts = { interrupt_before = { "tools" } } },
}
for _, v in ipairs(variants) do
  local what = "thread " .. v.thread
  v.opts.checkpointer = sst.MemorySaver()
  local app_w_interrupt = workflow:compile(v.opts)
  local config = lg.thread(v.thread)
  model_i = 0  -- reset the llm

  T.eq(lg.collect(app_w_interrupt:stream({ messages = human("what is weather in sf") },
                                         { configurable = config.configurable, durability = "exit" }, "updates")),
       { { agent = { messages = ai("ai1", "", call("tool_call123", "query")) } }, INTERRUPT }, what .. ": stream 1")

  snap_eq(app_w_interrupt:get_state(config), {
    values = { human("what is weather in sf"), ai("ai1", "", call("tool_call123", "query")) },
    tasks = { task("tools") }, next = { "tools" }, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "loop", step = 1 }, parent_config = nil,
  }, what .. ": state 1")

  -- modify ai message
  local s = app_w_interrupt:get_state(config)
  local last_message = sst.to_table(s.values.messages[#s.values.messages])
  last_message.tool_calls[1].args = { query = "a different query" }
  local next_config = app_w_interrupt:update_state(config, { messages = last_message })

  -- message was replaced instead of appended
  snap_eq(app_w_interrupt:get_state(config), {
    values = { human("what is weather in sf"), different },
    tasks = { task("tools") }, next = { "tools" }, thread_id = v.thread,
    config = v.thread == "1" and next_config or nil,
    metadata = { parents = sst.object{}, source = "update", step = 2 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 2")

  T.eq(chunks(lg.collect(app_w_interrupt:stream(nil, config, "updates")), what), {
    { tools = { messages = { tool_msg("result for a different query", "tool_call123") } } },
    { agent = { messages = ai("ai2", "", call("tool_call456", "another")) } },
    INTERRUPT,
  }, what .. ": stream 2")

  snap_eq(app_w_interrupt:get_state(config), {
    values = { human("what is weather in sf"), different,
               tool_msg("result for a different query", "tool_call123"),
               ai("ai2", "", call("tool_call456", "another")) },
    tasks = { task("tools") }, next = { "tools" }, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "loop", step = 4 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 3")

  app_w_interrupt:update_state(config, { messages = ai("ai2", "answer") })  -- replace existing message

  -- replaces message even if object identity is different, as long as id is the same
  snap_eq(app_w_interrupt:get_state(config), {
    values = { human("what is weather in sf"), different,
               tool_msg("result for a different query", "tool_call123"), ai("ai2", "answer") },
    tasks = sst.array{}, next = sst.array{}, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "update", step = 5 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 4")

  if v.thread == "2" then
    -- add an extra message as if it came from "tools" node
    app_w_interrupt:update_state(config, { messages = { role = "assistant", content = "an extra message" } }, "tools")

    -- extra message is coerced BaseMessage and appended
    -- now the next node is "agent" per the graph edges
    snap_eq(app_w_interrupt:get_state(config), {
      values = { human("what is weather in sf"), different,
                 tool_msg("result for a different query", "tool_call123"), ai("ai2", "answer"),
                 { role = "assistant", content = "an extra message" } },
      tasks = { task("agent") }, next = { "agent" }, thread_id = v.thread,
      metadata = { parents = sst.object{}, source = "update", step = 6 },
      parent_config = parent_of(app_w_interrupt, config),
    }, what .. ": state 5")
  end
end
T.finish()
