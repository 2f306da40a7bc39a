-- langgraph: test_large_cases.py::test_state_graph_packets
-- FakeMessagesListChatModel is a Lua node returning the scripted AIMessages in
-- turn; messages are superstep's tables (AIMessage: role "assistant",
-- ToolMessage: role "tool"), tool calls keep LangChain's { id, name, args }.
-- The two interrupt variants (after agent, before tools) make the same
-- assertions and run in one loop.
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = "__pregel_pull"

local task = lg.task
local snap_eq = lg.snap_eq
local PUSH = "__pregel_push"
local function push_task(name, i)
  return { name = name, path = { PUSH, i, false }, interrupts = sst.array{} }
end

-- _AnyId*Message: the id is checked and dropped.
local function any_id(list, what)
  local out = {}
  for i, m in ipairs(list) do
    if m.role == "user" or m.role == "tool" then
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
local function human(content) return { role = "user", content = content } end
local function tool_msg(content, call_id) return { role = "tool", content = content, name = "search_api", tool_call_id = call_id } end
local function ai(id, content, tool_calls) return { role = "assistant", id = id, content = content, tool_calls = tool_calls } end

local tools_by_name = { search_api = function(args) return "result for " .. args.query end }

local responses = {
  ai("ai1", "", { { id = "tool_call123", name = "search_api", args = { query = "query" } } }),
  ai("ai2", "", {
    { id = "tool_call234", name = "search_api", args = { query = "another", idx = 0 } },
    { id = "tool_call567", name = "search_api", args = { query = "a third one", idx = 1 } },
  }),
  ai("ai3", "answer"),
}
local model_i = 0
local function model_invoke()
  local r = responses[model_i + 1]
  model_i = (model_i + 1) % #responses
  return r
end

local function agent(data)
  return { messages = model_invoke(), something_extra = "hi there" }
end

local function should_continue(data)
  T.eq(data.something_extra, "hi there",
       "nodes can pass extra data to their cond edges, which isn't saved in state")
  local tool_calls = data.messages[#data.messages].tool_calls
  if tool_calls and #tool_calls > 0 then
    local sends = {}
    for i, tc in ipairs(tool_calls) do sends[i] = sst.Send("tools", tc) end
    return sends
  end
  return sst.END
end

local function tools_node(state, input)
  local output = tools_by_name[input.name](input.args)
  return { messages = { role = "tool", content = output, name = input.name, tool_call_id = input.id } }
end

-- A TypedDict state is closed in LangGraph (keys it does not declare are
-- dropped from the state, though the updates stream shows them).
local workflow = sst.StateGraph({ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } },
                                { closed = true })
workflow:add_node("agent", agent)
workflow:add_node("tools", tools_node)
workflow:set_entry_point("agent")
workflow:add_conditional_edges("agent", should_continue)
workflow:add_edge("tools", "agent")

local app = workflow:compile()

local out = app:invoke({ messages = { role = "user", content = "what is weather in sf" } })
T.eq(any_id(out.messages, "invoke"), {
  human("what is weather in sf"),
  responses[1],
  tool_msg("result for query", "tool_call123"),
  responses[2],
  tool_msg("result for another", "tool_call234"),
  tool_msg("result for a third one", "tool_call567"),
  ai("ai3", "answer"),
}, "invoke")

-- an updates chunk {node = {messages = one message}}, the message's id dropped when any
local function chunks(list, what)
  local out_ = {}
  for i, c in ipairs(list) do
    local node, upd = next(c)
    if type(upd) == "table" and upd.messages then
      local u = {}
      for k, x in pairs(upd) do u[k] = x end
      u.messages = any_id({ upd.messages }, what)[1]
      out_[i] = { [node] = u }
    else
      out_[i] = c
    end
  end
  return out_
end

T.eq(chunks(lg.collect(app:stream({ messages = { human("what is weather in sf") } }, nil, "updates")), "stream"), {
  { agent = { messages = responses[1], something_extra = "hi there" } },
  { tools = { messages = tool_msg("result for query", "tool_call123") } },
  { agent = { messages = responses[2], something_extra = "hi there" } },
  { tools = { messages = tool_msg("result for another", "tool_call234") } },
  { tools = { messages = tool_msg("result for a third one", "tool_call567") } },
  { agent = { messages = ai("ai3", "answer"), something_extra = "hi there" } },
}, "stream")

local INTERRUPT = { __interrupt__ = sst.array{} }
local function parent_of(app_, config) return app_:get_state_history(config, { limit = 2 })[2].config end
local function values(got, what)
  return { messages = any_id(got.values.messages, what), something_extra = got.values.something_extra }
  -- (something_extra is nil: the closed state drops it)
end

local variants = {
  { thread = "1", opts = { interrupt_after = { "agent" } } },
  { thread = "2", opts = { interrupt_before = { "tools" } } },
}
for _, v in ipairs(variants) do
  local what = "thread " .. v.thread
  v.opts.checkpointer = sst.MemorySaver()
  local app_w_interrupt = workflow:compile(v.opts)
  local config = lg.thread(v.thread)
  model_i = 0

  T.eq(lg.collect(app_w_interrupt:stream({ messages = human("what is weather in sf") },
                                         { configurable = config.configurable, durability = "exit" }, "updates")),
       { { agent = { messages = responses[1], something_extra = "hi there" } }, INTERRUPT }, what .. ": stream 1")

  local s = app_w_interrupt:get_state(config)
  snap_eq({ values = values(s, what), next = s.next, tasks = s.tasks, metadata = s.metadata, config = s.config,
            created_at = s.created_at, parent_config = s.parent_config, interrupts = s.interrupts }, {
    values = { messages = { human("what is weather in sf"), responses[1] } },
    tasks = { push_task("tools", 0) }, next = { "tools" }, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "loop", step = 1 }, parent_config = nil,
  }, what .. ": state 1")

  -- modify ai message
  local last_message = sst.to_table(s.values.messages[#s.values.messages])
  last_message.tool_calls[1].args.query = "a different query"
  app_w_interrupt:update_state(config, { messages = last_message, something_extra = "hi there" })

  -- message was replaced instead of appended
  s = app_w_interrupt:get_state(config)
  snap_eq({ values = values(s, what), next = s.next, tasks = s.tasks, metadata = s.metadata, config = s.config,
            created_at = s.created_at, parent_config = s.parent_config, interrupts = s.interrupts }, {
    values = { messages = { human("what is weather in sf"),
                            ai("ai1", "", { { id = "tool_call123", name = "search_api", args = { query = "a different query" } } }) } },
    tasks = { push_task("tools", 0) }, next = { "tools" }, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "update", step = 2 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 2")

  T.eq(chunks(lg.collect(app_w_interrupt:stream(nil, config, "updates")), what), {
    { tools = { messages = tool_msg("result for a different query", "tool_call123") } },
    { agent = { messages = responses[2], something_extra = "hi there" } },
    INTERRUPT,
  }, what .. ": stream 2")

  s = app_w_interrupt:get_state(config)
  snap_eq({ values = values(s, what), next = s.next, tasks = s.tasks, metadata = s.metadata, config = s.config,
            created_at = s.created_at, parent_config = s.parent_config, interrupts = s.interrupts }, {
    values = { messages = { human("what is weather in sf"),
                            ai("ai1", "", { { id = "tool_call123", name = "search_api", args = { query = "a different query" } } }),
                            tool_msg("result for a different query", "tool_call123"),
                            responses[2] } },
    tasks = { push_task("tools", 0), push_task("tools", 1) }, next = { "tools", "tools" }, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "loop", step = 4 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 3")

  app_w_interrupt:update_state(config, { messages = ai("ai2", "answer"), something_extra = "hi there" })

  -- replaces message even if object identity is different, as long as id is the same
  s = app_w_interrupt:get_state(config)
  snap_eq({ values = values(s, what), next = s.next, tasks = s.tasks, metadata = s.metadata, config = s.config,
            created_at = s.created_at, parent_config = s.parent_config, interrupts = s.interrupts }, {
    values = { messages = { human("what is weather in sf"),
                            ai("ai1", "", { { id = "tool_call123", name = "search_api", args = { query = "a different query" } } }),
                            tool_msg("result for a different query", "tool_call123"),
                            ai("ai2", "answer") } },
    tasks = sst.array{}, next = sst.array{}, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "update", step = 5 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 4")
end
T.finish()
