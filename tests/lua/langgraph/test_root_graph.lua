-- langgraph: test_large_cases.py::test_root_graph
-- The Python state is TypedDict `__root__: Annotated[list, add_messages]`
-- (the root value itself); superstep reserves names starting with "__", so
-- the field is `root` and a root value `[...]` is { root = {...} }.
-- FakeFunctionChatModel is a Lua node returning the scripted AIMessages in
-- turn; ToolNode is a node answering the last message's tool calls. Inputs
-- given as a message or a ("human", text) tuple are written as the user
-- message; deterministic message ids are checked as AnyStr. MoreState's nodes
-- (RunnableMap/RunnablePick around the model) read and write `root`.
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
  local values = got.values and { root = any_id(got.values.root or {}, what) }
  T.eq({ values = values, next = got.next, tasks = tasks, metadata = got.metadata,
         config = got.config, parent_config = got.parent_config, interrupts = got.interrupts },
       { values = { root = exp.values }, next = exp.next, tasks = exp.tasks, metadata = exp.metadata,
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
  return { root = r }
end

local tools = { search_api = function(args) return "result for " .. args.query end }
local function tool_node(state)
  local last = state.root[#state.root]
  local out = {}
  for _, c in ipairs(last.tool_calls) do
    out[#out + 1] = { role = "tool", content = tools[c.name](c.args), name = c.name, tool_call_id = c.id }
  end
  return { root = out }
end

local function should_continue(state)
  local last_message = state.root[#state.root]
  if last_message.tool_calls == nil or #last_message.tool_calls == 0 then return "end" end
  return "continue"
end

local workflow = sst.StateGraph{ root = { reducer = sst.reducers.add_messages, default = sst.array{} } }
workflow:add_node("agent", model)
workflow:add_node("tools", tool_node)
workflow:set_entry_point("agent")
workflow:add_conditional_edges("agent", should_continue, { continue = "tools", ["end"] = sst.END })
workflow:add_edge("tools", "agent")
local app = workflow:compile()

local out = app:invoke({ root = { human("what is weather in sf") } })
T.eq(any_id(out.root, "invoke"), {
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
    if node == "tools" and type(upd) == "table" and upd.root then
      res[i] = { tools = { root = any_id(upd.root, what) } }
    else
      res[i] = c
    end
  end
  return res
end

T.eq(chunks(lg.collect(app:stream({ root = { human("what is weather in sf") } }, nil, "updates")), "stream"), {
  { agent = { root = ai("ai1", "", call("tool_call123", "query")) } },
  { tools = { root = { tool_msg("result for query", "tool_call123") } } },
  { agent = { root = ai("ai2", "", call("tool_call456", "another")) } },
  { tools = { root = { tool_msg("result for another", "tool_call456") } } },
  { agent = { root = ai("ai3", "answer") } },
}, "stream")

local INTERRUPT = { __interrupt__ = sst.array{} }
local function parent_of(app_, config) return app_:get_state_history(config, { limit = 2 })[2].config end
local different = ai("ai1", "", call("tool_call123", "a different query"))

local saver2 = sst.MemorySaver()
local variants = {
  { thread = "1", opts = { interrupt_after = { "agent" } } },
  { thread = "2", opts = { interrupt_before = { "tools" } } },
}
for _, v in ipairs(variants) do
  local what = "thread " .. v.thread
  v.opts.checkpointer = v.thread == "2" and saver2 or sst.MemorySaver()
  local app_w_interrupt = workflow:compile(v.opts)
  local config = lg.thread(v.thread)
  model_i = 0  -- reset the llm

  T.eq(lg.collect(app_w_interrupt:stream({ root = human("what is weather in sf") },
                                         { configurable = config.configurable, durability = "exit" }, "updates")),
       { { agent = { root = ai("ai1", "", call("tool_call123", "query")) } }, INTERRUPT }, what .. ": stream 1")

  snap_eq(app_w_interrupt:get_state(config), {
    values = { human("what is weather in sf"), ai("ai1", "", call("tool_call123", "query")) },
    tasks = { task("tools") }, next = { "tools" }, thread_id = v.thread,
    metadata = { parents = sst.object{}, source = "loop", step = 1 }, parent_config = nil,
  }, what .. ": state 1")

  -- modify ai message
  local s = app_w_interrupt:get_state(config)
  local last_message = sst.to_table(s.values.root[#s.values.root])
  last_message.tool_calls[1].args = { query = "a different query" }
  local next_config = app_w_interrupt:update_state(config, { root = last_message })

  -- message was replaced instead of appended
  snap_eq(app_w_interrupt:get_state(config), {
    values = { human("what is weather in sf"), different },
    tasks = { task("tools") }, next = { "tools" }, thread_id = v.thread,
    config = v.thread == "1" and next_config or nil,
    metadata = { parents = sst.object{}, source = "update", step = 2 },
    parent_config = parent_of(app_w_interrupt, config),
  }, what .. ": state 2")

  T.eq(chunks(lg.collect(app_w_interrupt:stream(nil, config, "updates")), what), {
    { tools = { root = { tool_msg("result for a different query", "tool_call123") } } },
    { agent = { root = ai("ai2", "", call("tool_call456", "another")) } },
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

  app_w_interrupt:update_state(config, { root = ai("ai2", "answer") })  -- replace existing message

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
    app_w_interrupt:update_state(config, { root = { role = "assistant", content = "an extra message" } }, "tools")

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

-- create new graph with one more state key, reuse previous thread history
local function simple_add(left, right)
  left, right = sst.to_table(left), sst.to_table(right)  -- reducers get state views
  local out = {}
  for _, m in ipairs(left or {}) do out[#out + 1] = m end
  if type(right) ~= "table" or right[1] == nil then right = { right } end
  for _, m in ipairs(right) do out[#out + 1] = m end
  return out
end

local new_workflow = sst.StateGraph{ root = { reducer = simple_add, default = sst.array{} },
                                     something_else = sst.reducers.replace }
new_workflow:add_node("agent", function(state) return { root = model().root } end)
new_workflow:add_node("tools", function(state) return { root = tool_node(state).root } end)
new_workflow:set_entry_point("agent")
new_workflow:add_conditional_edges("agent", should_continue, { continue = "tools", ["end"] = sst.END })
new_workflow:add_edge("tools", "agent")
local new_app = new_workflow:compile{ checkpointer = saver2 }
model_i = 0  -- reset the llm
local config = lg.thread("2")

-- previous state is converted to new schema
snap_eq(new_app:get_state(config), {
  values = { human("what is weather in sf"), different,
             tool_msg("result for a different query", "tool_call123"), ai("ai2", "answer"),
             { role = "assistant", content = "an extra message" } },
  tasks = { task("agent") }, next = { "agent" }, thread_id = "2",
  metadata = { parents = sst.object{}, source = "update", step = 6 },
  parent_config = parent_of(new_app, config),
}, "new app: state")

-- new input is merged to old state
local res = new_app:invoke({ root = { human("what is weather in la") }, something_else = "value" },
                           config, { interrupt_before = { "agent" } })
res = sst.to_table(res)
local got_root = res.root or {}
-- the human and extra messages keep the ids add_messages gave them; the new one has none
local la = got_root[6]
res.root = any_id({ table.unpack(got_root, 1, 5) }, "new app: invoke")
res.root[6] = la
T.eq(res, { root = { human("what is weather in sf"), different,
                     tool_msg("result for a different query", "tool_call123"), ai("ai2", "answer"),
                     { role = "assistant", content = "an extra message" },
                     human("what is weather in la") },
            something_else = "value" }, "new app: invoke")
T.finish()
