-- Lua API tests, run by tests/unit/test_lua.c through sst_lua_script_load.
-- Checks run in the master state only (superstep.worker is false there);
-- worker states load this file again just to find the node functions.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq, raises = T.check, T.eq, T.raises

-- Graph 1: a counter chain with sum and append (also used by the worker test).
local g1 = sst.StateGraph{
  count = { reducer = sst.reducers.sum, default = 0 },
  path = { reducer = sst.reducers.append, default = {} },
}
g1:add_node("a", function(state) return { count = 1, path = { "a" } } end)
g1:add_node("b", function(state) return { count = state.count * 10, path = { "b" } } end)
g1:add_edge(sst.START, "a")
g1:add_edge("a", "b")
g1:add_edge("b", sst.END)

-- Graph 2: parallel fan-out with Send, run on 2 workers. A task on the main
-- state waits until a task has run in a worker state (a flag file), so the
-- test proves that worker states are made and used.
local function exists(path)
  local f = io.open(path)
  if f then f:close() return true end
  return false
end
local g2 = sst.StateGraph{ results = { reducer = sst.reducers.append, default = {} },
                           where = { reducer = sst.reducers.append, default = {} },
                           items = sst.reducers.replace, flag = sst.reducers.replace }
g2:add_node("work", function(state, item, ctx)
  if sst.worker then
    local f = assert(io.open(state.flag, "w"))
    f:write("x")
    f:close()
  else
    local deadline = os.time() + 30
    while not exists(state.flag) and os.time() < deadline do end
  end
  return { results = { item * 2 }, where = { sst.worker and "worker" or "main" } }
end)
g2:add_conditional_edges(sst.START, function(state)
  local sends = {}
  for _, it in ipairs(state.items) do sends[#sends + 1] = sst.Send("work", it) end
  return sends
end)
local app2 = g2:compile{ workers = 2 }

-- Graph 3: routing with a path map, Command goto, interrupt, custom reducer, emit.
local g3 = sst.StateGraph{
  log = function(current, update)      -- a custom reducer written in Lua
    local out = {}
    if current then for _, v in ipairs(current) do out[#out + 1] = v end end
    out[#out + 1] = string.upper(update)
    return out
  end,
  answer = sst.reducers.replace,
  route = sst.reducers.replace,
}
g3:add_node("start", function(state, input, ctx)
  ctx.emit({ at = ctx.node, step = ctx.step })
  return { log = "start" }
end)
g3:add_node("left", function(state) return { log = "left" } end)
g3:add_node("right", function(state)
  return sst.Command{ update = { log = "right" }, ["goto"] = "ask" }
end, { ends = { "ask" } })
g3:add_node("ask", function(state)
  local a = sst.interrupt("name?")
  return { answer = "hello " .. a, log = "ask" }
end)
g3:add_edge(sst.START, "start")
g3:add_conditional_edges("start", function(state)
  return state.route
end, { l = "left", r = "right" })
g3:add_edge("left", sst.END)
g3:add_edge("ask", sst.END)

-- Graph 4: failures.
local g4 = sst.StateGraph{ x = sst.reducers.replace }
g4:add_node("boom", function(state) error("kaboom") end, { retry = { max_attempts = 2, initial_interval = 0, jitter = false } })
g4:add_node("badvalue", function(state) return { x = function() end } end)
g4:add_node("badreturn", function(state) return 42 end)
g4:add_conditional_edges(sst.START, function(state) return state.x end)

if not sst.worker then
  -- invoke, reducers, defaults
  local app1 = g1:compile{}
  local out = app1:invoke({ count = 5 })
  eq(out, { count = 66, path = { "a", "b" } }, "chain: 5 + 1, then + 6 * 10")

  -- proxies: read-only, lengths, pairs
  local seen = {}
  local gp = sst.StateGraph{ m = sst.reducers.replace, n = sst.reducers.replace }
  gp:add_node("read", function(state)
    seen.len = #state.m
    seen.second = state.m[2].id
    seen.missing = state.nope
    local keys = {}
    for k, v in pairs(state.m[1]) do keys[#keys + 1] = k end
    seen.keys = table.concat(keys, ",")
    seen.ro = select(2, pcall(function() state.m = 1 end))
    seen.null = state.n == sst.null
    seen.copy = sst.to_table(state.m)[3].id
    return nil
  end)
  gp:add_edge(sst.START, "read")
  gp:compile{}:invoke({ m = { { id = "x", z = 1 }, { id = "y" }, { id = "w" } }, n = sst.null })
  eq(seen.len, 3, "proxy length")
  eq(seen.second, "y", "proxy index")
  check(seen.missing == nil, "missing field is nil")
  eq(seen.keys, "id,z", "proxy pairs in key order")
  check(tostring(seen.ro):find("read-only", 1, true), "state is read-only")
  check(seen.null, "null round trip")
  eq(seen.copy, "w", "to_table")

  -- parallel Lua nodes on two workers (worker states load this script)
  local items = {}
  for i = 1, 40 do items[i] = i end
  local flag = os.tmpname()
  os.remove(flag)
  local r2 = app2:invoke({ items = items, flag = flag })
  os.remove(flag)
  local places = {}
  for _, w in ipairs(r2.where) do places[w] = true end
  check(places.main and places.worker, "tasks ran on the main state and in a worker state: " ..
        sst.json_encode(r2.where))
  check(#r2.results == 40, "40 results from 2 workers")
  local expect = {}
  for i = 1, 40 do expect[i] = i * 2 end
  eq(r2.results, expect, "Send results in deterministic order")

  -- routing, goto, interrupts and resume through a MemorySaver
  local saver = sst.MemorySaver()
  local app3 = g3:compile{ checkpointer = saver }
  local left = app3:invoke({ route = "l" }, { configurable = { thread_id = "L" } })
  eq(left.log, { "START", "LEFT" }, "path map route + Lua reducer")
  local cfg = { configurable = { thread_id = "R" } }
  local first = app3:invoke({ route = "r" }, cfg)
  check(first.__interrupt__ ~= nil, "interrupted")
  eq(first.__interrupt__[1].value, "name?", "interrupt value")
  check(type(first.__interrupt__[1].id) == "string", "interrupt id (LangGraph's Interrupt: id, value)")
  local st = app3:get_state(cfg)
  eq(st.next, { "ask" }, "get_state next")
  local done = app3:invoke(sst.Command{ resume = "ada" }, cfg)
  eq(done.answer, "hello ada", "resume")
  eq(done.log, { "START", "RIGHT", "ASK" }, "Command goto")
  local hist = app3:get_state_history(cfg)
  check(#hist >= 4, "history has the checkpoints")
  local limited = app3:get_state_history(cfg, { limit = 2 })
  eq(#limited, 2, "history limit")

  local by_source = app3:get_state_history(cfg, { filter = { source = "input" } })
  check(#by_source >= 1, "history filter")
  for _, h in ipairs(by_source) do eq(h.metadata.source, "input", "filtered by source") end

  -- Command goto with a list of targets and a Send
  local gs = sst.StateGraph{ got = { reducer = sst.reducers.append, default = {} } }
  gs:add_node("hub", function()
    return sst.Command{ ["goto"] = { "x", sst.Send("y", { n = 7 }) } }
  end, { ends = { "x", "y" } })
  gs:add_node("x", function() return { got = { "x" } } end)
  gs:add_node("z", function() return {} end) -- an empty update table is no update
  gs:add_node("y", function(state, input) return { got = { "y" .. input.n } } end)
  gs:add_edge(sst.START, "hub")
  gs:add_edge("x", "z")
  eq(gs:compile{}:invoke({}).got, { "x", "y7" }, "goto list with a Send; {} input and update")

  -- update_state and fork
  local newcfg = app3:update_state(cfg, { answer = "edited" }, "ask")
  check(type(newcfg.configurable.checkpoint_id) == "string", "update_state returns a config")
  eq(app3:get_state(cfg).values.answer, "edited", "update_state applied")

  -- in-memory threads (no checkpointer): kept by the app, freed with it
  do
    local mem = g1:compile{}
    eq(mem:invoke({ count = 1 }, { thread_id = "m1" }).count, 22, "in-memory thread, first run")
    eq(mem:invoke({ count = 0 }, { thread_id = "m1" }).count, 253, "in-memory thread continues (22 + 1, then + 230)")
    eq(mem:get_state({ thread_id = "m1" }).values.count, 253, "in-memory thread state")
    mem = nil
    collectgarbage()
  end

  -- stream modes
  local updates = {}
  for ev in app1:stream({ count = 0 }, nil, "updates") do updates[#updates + 1] = ev end
  eq(updates, { { a = { count = 1, path = { "a" } } }, { b = { count = 10, path = { "b" } } } },
     "stream updates")
  local custom = {}
  for mode, ev in app3:stream({ route = "l" }, { configurable = { thread_id = "S" } },
                              { "custom", "values" }) do
    custom[#custom + 1] = mode
  end
  eq(custom, { "values", "custom", "values", "values" }, "stream several modes")

  -- drawing
  check(app1:draw_mermaid():find("a --> b", 1, true), "mermaid")
  check(app1:draw_dot():find("digraph", 1, true), "dot")

  -- errors
  local app4 = g4:compile{}
  raises(function() app4:invoke({ x = "boom" }) end, "kaboom", "Lua error becomes task error")
  raises(function() app4:invoke({ x = "boom" }) end, "stack traceback", "traceback in message")
  raises(function() app4:invoke({ x = "badvalue" }) end, "update.x: a function cannot be stored",
         "function value names the field")
  raises(function() app4:invoke({ x = "badreturn" }) end, "returned a number", "bad return")
  raises(function() app1:invoke({ count = "ten" }) end, "reducer 'sum' on field 'count'",
         "reducer type error")
  raises(function() app1:invoke({ f = print }) end, "input.f: a function cannot be stored",
         "bad input")
  raises(function() sst.json_encode({ a = { { b = print } } }) end,
         "json_encode.a[1].b: a function cannot be stored", "nested path in errors")
  local cyc = {}
  cyc[1] = cyc
  raises(function() sst.json_encode(cyc) end, "nested too deeply", "cycle")
  raises(function() sst.json_encode({ 1, 2, x = 3 }) end, "neither a list", "mixed table")
  raises(function() sst.json_encode(0 / 0) end, "NaN and infinities", "NaN")
  raises(function() sst.json_encode("\xff") end, "not valid UTF-8", "bad UTF-8")
  raises(function() sst.StateGraph{ x = 42 } end, "field 'x': expected a reducer", "bad schema")
  raises(function() g1:add_node("a", function() end) end, "duplicate node 'a'", "duplicate")
  raises(function()
    local g = sst.StateGraph{}
    g:add_node("n", function() end)
    g:add_edge(sst.START, "zzz")
    g:compile{}
  end, "unknown node 'zzz'", "compile error")
  raises(function() sst.Command{ goto_ = "x" } end, "unknown key 'goto_'", "Command keys")
  raises(function() sst.interrupt("x") end, "only be called inside a node", "interrupt outside")
  raises(function() g1:compile{ durability = "fast" } end, "durability must be", "durability")

  -- set_entry_point / set_finish_point, ipairs and tostring on views, interrupt_before
  local ge = sst.StateGraph{ xs = sst.reducers.replace, sum = sst.reducers.replace,
                             text = sst.reducers.replace }
  ge:add_node("s", function(state)
    local total = 0
    for _, x in ipairs(state.xs) do total = total + x end
    return { sum = total, text = tostring(state.xs) }
  end)
  ge:set_entry_point("s")
  ge:set_finish_point("s")
  local re = ge:compile{}:invoke({ xs = { 1, 2, 3 } })
  eq(re.sum, 6, "ipairs over a view")
  eq(re.text, "[1,2,3]", "tostring of a view is JSON")
  local ib = ge:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "s" } }
  local stopped = ib:invoke({ xs = { 1 } }, { thread_id = "ib" })
  check(stopped.__interrupt__ == nil and stopped.sum == nil, "interrupt_before stops before s (no __interrupt__, as LangGraph)")
  eq(ib:invoke(nil, { thread_id = "ib" }).sum, 1, "continue after interrupt_before")
  local meta = sst.StateGraph{}
  meta:add_node("m", function() return nil end, { metadata = { owner = "me" } })
  meta:add_edge(sst.START, "m")
  check(meta:compile{}:draw_mermaid():find("m", 1, true), "node with metadata compiles")
  raises(function() meta:add_node("bad", function() end, { retry = { max_attempts = 0 } }) end,
         "max_attempts must be at least 1", "bad retry policy")
  -- One reader of retry fields for nodes and tasks: the same checks, the same words.
  raises(function() meta:add_node("neg", function() end, { retry = { initial_interval = -1 } }) end,
         "'neg': retry.initial_interval must be a number from 0 to 1e9, got -1", "a negative interval")
  raises(function() meta:add_node("half", function() end, { retry = { max_attempts = 2.5 } }) end,
         "'half': retry.max_attempts must be at least 1", "a fractional max_attempts")
  raises(function() ge:compile{ checkpointer = 42 } end, "checkpointer must be", "bad saver")

  -- create_react_agent with the scripted model and a Lua tool
  do
    local replies = os.tmpname()
    local f = assert(io.open(replies, "w"))
    f:write('{"content":"adding","tool_calls":[{"id":"c1","type":"function","function":'
            .. '{"name":"add","arguments":"{\\"a\\":2,\\"b\\":40}"}}]}\n')
    f:write('{"content":"it is 42"}\n')
    f:write('{"content":"checking","tool_calls":[{"id":"c2","type":"function","function":'
            .. '{"name":"add","arguments":"{\\"a\\":1,\\"b\\":1}"}}]}\n')
    f:write('{"content":"rejected, fine"}\n')
    f:close()
    local seen = {}
    local agent = sst.create_react_agent{
      model = "fake:" .. replies,
      tools = { { name = "add", description = "Adds.",
                  parameters = { type = "object", properties = { a = { type = "integer" },
                                 b = { type = "integer" } }, required = { "a", "b" } },
                  fn = function(args) seen[#seen + 1] = args.a; return args.a + args.b end } },
      system_prompt = "Be brief.",
      checkpointer = sst.MemorySaver(),
    }
    local cfg = { configurable = { thread_id = "agent" } }
    local out = agent:invoke({ messages = { { role = "user", content = "2 + 40?" } } }, cfg)
    eq(out.messages[3].content, "42", "Lua tool result")
    eq(out.messages[4].content, "it is 42", "agent reply")
    eq(seen, { 2 }, "the Lua tool ran once")
    eq(out.iteration, 2, "two model calls")
    raises(function() sst.create_react_agent{ model = 42 } end, "model must be", "agent model")
    raises(function() sst.create_react_agent{ model = "fake:/nonexistent" } end, "cannot open",
           "agent script")
    raises(function() sst.create_react_agent{ model = "fake:" .. replies, tools = { { name = "x" } } } end,
           "needs a name and fn", "agent tool")
    -- approval: the proposed call interrupts; "reject" answers the model instead of running it
    local gated = sst.create_react_agent{
      model = "fake:" .. replies, approve_tools = true, checkpointer = sst.MemorySaver(),
      tools = { { name = "add", fn = function(args) seen[#seen + 1] = -1; return 0 end } } }
    local c2 = { configurable = { thread_id = "gated" } }
    local first = gated:invoke({ messages = { { role = "user", content = "go" } } }, c2)
    eq(first.__interrupt__[1].value.approve_tool_call.id, "c1", "the first proposed call")
    local approved = gated:invoke(sst.Command{ resume = "approve" }, c2)
    eq(approved.messages[#approved.messages].content, "it is 42", "after an approval")
    eq(seen, { 2, -1 }, "the approved tool ran")
    local stop = gated:invoke({ messages = { { role = "user", content = "again" } } }, c2)
    check(stop.__interrupt__ ~= nil, "approval interrupts")
    eq(stop.__interrupt__[1].value.approve_tool_call.id, "c2", "the proposed call")
    local done = gated:invoke(sst.Command{ resume = "reject" }, c2)
    eq(done.messages[#done.messages].content, "rejected, fine", "after a rejection")
    eq(done.messages[#done.messages - 1].content, "error: the user rejected this tool call",
       "the model read the rejection")
    eq(#seen, 2, "the rejected tool did not run")
    -- the messages stream: tokens as they come, with the id the stored reply keeps
    local toks, ids = {}, {}
    local heard, kinds = {}, {}
    local lone = sst.create_react_agent{
      model = "fake:" .. replies,
      on_token = function(t) heard[#heard + 1] = t end,
      on_event = function(kind, data) kinds[#kinds + 1] = kind end,
    }
    local tool_msgs = 0
    for ev in lone:stream({ messages = { { role = "user", content = "x" } } }, nil, "messages") do
      if ev.delta ~= nil then
        toks[#toks + 1] = ev.delta
        ids[ev.id] = true
      else -- LangGraph's (message, metadata) for the tool's message (the replies came as tokens)
        tool_msgs = tool_msgs + 1
        eq(ev[1].role, "tool", "a message written to the state")
      end
    end
    eq(tool_msgs, 1, "the tool's message once")
    -- reply 1 asks for a tool this agent lacks ("error: unknown tool"), so the model is asked again
    eq(toks, { "adding", "it ", "is ", "42" }, "message tokens streamed")
    local n = 0
    for _ in pairs(ids) do n = n + 1 end
    eq(n, 2, "one message id per model reply")
    eq(heard, toks, "on_token hears the same tokens")
    eq(kinds, { "llm_start", "llm_end", "tool_start", "tool_end", "llm_start", "llm_end" },
       "on_event")
    os.remove(replies)
  end

  -- SQLite saver and JSON helpers
  local path = os.tmpname()
  local app5 = g1:compile{ checkpointer = sst.SqliteSaver(path), durability = "sync" }
  eq(app5:invoke({ count = 1 }, { configurable = { thread_id = "q" } }).count, 22, "sqlite run")
  eq(app5:get_state({ configurable = { thread_id = "q" } }).values.count, 22, "sqlite state")
  os.remove(path); os.remove(path .. "-wal"); os.remove(path .. "-shm")
  eq(sst.json_decode('{"a":[1,2.5,null]}').a[2], 2.5, "json_decode")
  eq(sst.json_encode(sst.object()), "{}", "empty object")
  eq(sst.json_encode({}), "[]", "empty table is a list")
end

T.finish()
return g1
