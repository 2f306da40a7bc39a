-- LangGraph parity of the Lua app (issue 14): invoke/stream options, the
-- node context, compile options, interrupts in results, delete_thread and
-- the live stream iterator.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq, raises = T.check, T.eq, T.raises

local function cfg(id) return { configurable = { thread_id = id } } end

-- Built first and by worker states too (graph 1 of every state): a run whose
-- nodes run on two workers. Everything else runs in the loading state only.
local workers_app
do
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("fan", function() return { log = { "fan" } } end)
  for _, n in ipairs({ "x", "y", "z" }) do
    g:add_node(n, function() return { log = { n } } end)
    g:add_edge("fan", n)
  end
  g:add_node("join", function() return { log = { "join" } } end)
  g:add_edge({ "x", "y", "z" }, "join")
  g:add_edge(sst.START, "fan")
  workers_app = g:compile{ workers = 2 }
end
if sst.worker then
  return workers_app
end

local function chain(names, fields)
  local g = sst.StateGraph(fields or { log = { reducer = sst.reducers.append, default = sst.array{} } })
  local prev = sst.START
  for _, n in ipairs(names) do
    g:add_node(n, function() return { log = { n } } end)
    g:add_edge(prev, n)
    prev = n
  end
  return g
end

-- invoke/stream options: a third (or fourth) table of options; unknown
-- options are errors naming them; config.recursion_limit/durability/context.
T.case("invoke and stream options", function()
  local g = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
  g:add_node("loop", function() return { n = 1 } end)
  g:add_edge(sst.START, "loop")
  g:add_conditional_edges("loop", function() return "loop" end)
  local app = g:compile()
  local ok, err = pcall(app.invoke, app, { n = 0 }, nil, { recursion_limit = 3 })
  check(not ok and err.code == "SST_ELIMIT", "opts.recursion_limit: " .. tostring(err))
  ok, err = pcall(app.invoke, app, { n = 0 }, { recursion_limit = 4 })
  check(not ok and err.code == "SST_ELIMIT", "config.recursion_limit")
  raises(function() app:invoke({}, nil, { foo = 1 }) end, "invoke: unknown option 'foo'", "invoke unknown")
  raises(function() app:invoke({}, nil, { stream_mode = "values" }) end,
         "invoke: unknown option 'stream_mode'", "stream_mode is for stream")
  raises(function() app:stream({}, nil, { bar = 1 }) end, "stream: unknown option 'bar'", "stream unknown")
  raises(function() app:stream({}, nil, "values", { bar = 1 }) end, "stream: unknown option 'bar'",
         "stream unknown after a mode")
  raises(function() app:stream({}, nil, "nope") end, "nope", "unknown mode")
  raises(function() app:invoke({}, nil, { durability = "never" }) end, "durability", "bad durability")

  -- stream_mode in the options; a mode list gives (mode, chunk) pairs.
  local c = chain({ "a", "b" })
  local capp = c:compile()
  local seen = {}
  for chunk in capp:stream({}, nil, { stream_mode = "updates" }) do seen[#seen + 1] = chunk end
  eq(seen, { { a = { log = { "a" } } }, { b = { log = { "b" } } } }, "stream_mode option")
  local pairs_seen = {}
  for mode, chunk in capp:stream({}, nil, { stream_mode = { "updates" } }) do
    pairs_seen[#pairs_seen + 1] = mode
    check(type(chunk) == "table", "pair chunk")
  end
  eq(pairs_seen, { "updates", "updates" }, "a list of modes gives pairs")

  -- durability = "exit" in the options: one checkpoint.
  local d = chain({ "a", "b" }):compile{ checkpointer = sst.MemorySaver() }
  d:invoke({}, cfg("exit"), { durability = "exit" })
  eq(#d:get_state_history(cfg("exit")), 1, "opts.durability exit")
  d:invoke({}, { configurable = { thread_id = "exit2" }, durability = "exit" })
  eq(#d:get_state_history(cfg("exit2")), 1, "config.durability exit")
  local n = 0
  for _ in d:stream({}, cfg("exit3"), "values", { durability = "exit" }) do n = n + 1 end
  eq(#d:get_state_history(cfg("exit3")), 1, "stream opts durability exit")
end)

-- ctx.context, ctx.config, ctx.remaining_steps, ctx.is_last_step; the run's
-- configurable keys reach the checkpoint metadata.
T.case("node context", function()
  local g = sst.StateGraph({ out = sst.reducers.replace, steps = sst.reducers.append },
                           { context_schema = { "user" } })
  g:add_node("n", function(_, _, ctx)
    return {
      out = {
        user = ctx.context and ctx.context.user,
        thread = ctx.config and ctx.config.configurable and ctx.config.configurable.thread_id,
        extra = ctx.config and ctx.config.configurable and ctx.config.configurable.extra,
      },
      steps = { { ctx.remaining_steps, ctx.is_last_step } },
    }
  end)
  g:add_edge(sst.START, "n")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  local r = app:invoke({}, { configurable = { thread_id = "ctx", extra = "e1" } },
                       { context = { user = "ada" } })
  eq(r.out, { user = "ada", thread = "ctx", extra = "e1" }, "context and config in a node")
  eq(r.steps, { { 25, false } }, "remaining_steps, is_last_step")
  eq(app:get_state(cfg("ctx")).metadata.extra, "e1", "configurable key in metadata")
  r = app:invoke({}, { configurable = { thread_id = "ctx2" }, context = { user = "bob" } })
  eq(r.out.user, "bob", "config.context")
  local seen
  for chunk in app:stream({}, cfg("ctx3"), "values", { context = { user = "cy" } }) do seen = chunk end
  eq(seen.out.user, "cy", "stream context")

  -- The last step: remaining_steps 1 and is_last_step true.
  local lg = sst.StateGraph{ seen = sst.reducers.append }
  lg:add_node("loop", function(_, _, ctx)
    if ctx.is_last_step then return sst.Command{ update = { seen = { ctx.remaining_steps } }, ["goto"] = sst.END } end
    return { seen = { ctx.remaining_steps } }
  end)
  lg:add_edge(sst.START, "loop")
  lg:add_conditional_edges("loop", function() return "loop" end)
  eq(lg:compile():invoke({}, { recursion_limit = 3 }).seen, { 3, 2, 1 }, "remaining steps count down")
  local plain = chain({ "a" })
  plain:add_node("b", function(_, _, ctx) return { log = { tostring(ctx.context) } } end)
  plain:add_edge("a", "b")
  eq(plain:compile():invoke({}).log, { "a", "nil" }, "no context: nil")
end)

-- compile options: interrupt_before/after = "*", long lists, unknown options;
-- StateGraph{closed = true}.
T.case("compile options", function()
  local all = chain({ "a", "b" }):compile{ checkpointer = sst.MemorySaver(), interrupt_after = "*" }
  all:invoke({}, cfg("star"))
  eq(all:get_state(cfg("star")).next, { "b" }, "interrupt_after '*' stops after a")
  local before = chain({ "a", "b" }):compile{ checkpointer = sst.MemorySaver(), interrupt_before = "*" }
  before:invoke({}, cfg("star"))
  eq(before:get_state(cfg("star")).next, { "a" }, "interrupt_before '*' stops before a")
  raises(function() chain({ "a" }):compile{ interrupt_before = 5 } end, "interrupt_before", "a number")
  raises(function() chain({ "a" }):compile{ interrupt_after = "a" } end, "interrupt_after", "a name")
  raises(function() chain({ "a" }):compile{ cache_policy = 1 } end, "compile: unknown option 'cache_policy'",
         "unknown compile option")
  local names = {}
  for i = 1, 100 do names[i] = "n" .. i end
  local long = chain(names):compile{ checkpointer = sst.MemorySaver(), interrupt_before = names }
  long:invoke({}, cfg("long"))
  eq(long:get_state(cfg("long")).next, { "n1" }, "100 names in interrupt_before")
  raises(function() chain({ "a" }):compile{ interrupt_before = { "a", 3 } } end, "interrupt_before",
         "a non-name in the list")

  local closed = sst.StateGraph({ a = sst.reducers.replace }, { closed = true })
  closed:add_node("n", function() return { a = 1, other = 2 } end)
  closed:add_edge(sst.START, "n")
  eq(closed:compile():invoke({ extra = 1 }), { a = 1 }, "closed schema drops undeclared keys")
  -- Declared fields close the state by default (LangGraph's TypedDict); closed = false
  -- keeps undeclared keys with replace; input and output schema names are fields.
  local default = sst.StateGraph({ a = sst.reducers.replace }, { context_schema = { "x" } })
  default:add_node("n", function() return { a = 1, other = 2 } end)
  default:add_edge(sst.START, "n")
  eq(default:compile():invoke({ extra = 1 }), { a = 1 }, "declared fields: closed by default")
  local open = sst.StateGraph({ a = sst.reducers.replace }, { closed = false })
  open:add_node("n", function() return { a = 1, other = 2 } end)
  open:add_edge(sst.START, "n")
  eq(open:compile():invoke({}), { a = 1, other = 2 }, "open schema keeps them")
  local none = sst.StateGraph()
  none:add_node("n", function() return { a = 1, other = 2 } end)
  none:add_edge(sst.START, "n")
  eq(none:compile():invoke({}), { a = 1, other = 2 }, "no fields declared: open")
  local out = sst.StateGraph({ a = sst.reducers.replace }, { output_schema = { "result" } })
  out:add_node("n", function(s) return { result = s.a + 1, other = 2 } end)
  out:add_edge(sst.START, "n")
  eq(out:compile():invoke({ a = 1 }), { result = 2 }, "an output schema's names are fields")
  raises(function() sst.StateGraph({}, { closed = "yes" }) end, "closed", "closed must be a boolean")
end)

-- __interrupt__: interrupt() calls only, as {id, value}; absent after a
-- static stop; a checkpointer needs a thread_id.
T.case("interrupts and thread ids", function()
  local g = sst.StateGraph{ answer = sst.reducers.replace }
  g:add_node("ask", function() return { answer = sst.interrupt("name?") } end)
  g:add_edge(sst.START, "ask")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  local r = app:invoke({}, cfg("i1"))
  eq(#r.__interrupt__, 1, "one interrupt")
  eq(r.__interrupt__[1].value, "name?", "its value")
  check(type(r.__interrupt__[1].id) == "string" and #r.__interrupt__[1].id > 0, "its id")
  eq(r.__interrupt__[1].node, nil, "no node key")
  local keys = 0
  for _ in pairs(r.__interrupt__[1]) do keys = keys + 1 end
  eq(keys, 2, "id and value only")

  local st = chain({ "a", "b" }):compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "b" } }
  local stopped = st:invoke({}, cfg("s1"))
  eq(stopped.__interrupt__, nil, "no __interrupt__ on a static stop")
  eq(stopped.log, { "a" }, "stopped before b")

  raises(function() app:invoke({}) end, "invoke: a checkpointer needs a thread_id in config.configurable",
         "invoke without a thread id")
  raises(function() app:invoke({}, { configurable = {} }) end, "a checkpointer needs a thread_id",
         "empty configurable")
  raises(function() for _ in app:stream({}) do end end,
         "stream: a checkpointer needs a thread_id in config.configurable", "stream without a thread id")

  local mem = chain({ "a" }):compile()
  mem:invoke({}, cfg("m"))
  local s = mem:get_state(cfg("m"))
  eq(s, { values = { log = { "a" } } }, "in-memory get_state is {values}")
end)

-- delete_thread on savers and apps.
T.case("delete_thread", function()
  for _, saver in ipairs({ sst.MemorySaver(), sst.SqliteSaver(":memory:") }) do
    local app = chain({ "a" }):compile{ checkpointer = saver }
    app:invoke({}, cfg("d1"))
    app:invoke({}, cfg("d2"))
    saver:delete_thread("d1")
    eq(#app:get_state_history(cfg("d1")), 0, "saver:delete_thread")
    eq(#app:get_state_history(cfg("d2")), 3, "other thread kept")
    app:delete_thread("d2")
    eq(#app:get_state_history(cfg("d2")), 0, "app:delete_thread")
    saver:delete_thread("never")
  end
  local mem = chain({ "a" }):compile()
  mem:invoke({}, cfg("m"))
  mem:invoke({}, cfg("m"))
  eq(mem:get_state(cfg("m")).values.log, { "a", "a" }, "in-memory thread kept")
  mem:delete_thread("m")
  eq(mem:get_state(cfg("m")).values, sst.object{}, "in-memory thread deleted")
  raises(function() sst.MemorySaver():delete_thread() end, "thread", "delete_thread needs an id")
end)

-- The stream is live: each chunk reaches the loop while the run goes on.
T.case("live stream", function()
  local seen = 0
  local during = {}
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  for _, n in ipairs({ "a", "b", "c" }) do
    g:add_node(n, function()
      during[#during + 1] = seen
      return { log = { n } }
    end)
  end
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  g:add_edge("b", "c")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  for _ in app:stream({}, cfg("live"), "updates") do seen = seen + 1 end
  eq(during, { 0, 1, 2 }, "each node ran after the loop saw the chunks before it")
  eq(seen, 3, "three chunks")

  -- Several modes: (mode, chunk), live as well.
  seen, during = 0, {}
  local modes = {}
  for mode in app:stream({}, cfg("live2"), { "updates", "values" }) do
    seen = seen + 1
    modes[#modes + 1] = mode
  end
  local counts = {}
  for _, m in ipairs(modes) do counts[m] = (counts[m] or 0) + 1 end
  eq(counts.updates, 3, "an updates chunk per node")
  check((counts.values or 0) >= 3, "values chunks")
  check(#during == 3 and during[1] < during[2] and during[2] < during[3] and during[3] < seen,
        "live with several modes: " .. sst.json_encode(during))

  -- Early break: the run stops; the thread can be used again.
  seen, during = 0, {}
  for _ in app:stream({}, cfg("brk"), "updates") do
    seen = seen + 1
    break
  end
  eq(during, { 0 }, "the run stopped after the break")
  eq(app:get_state(cfg("brk")).next, { "b" }, "the thread stopped before b")
  local r = app:invoke(nil, cfg("brk"))
  eq(r.log, { "a", "b", "c" }, "the thread runs again after a break")

  -- A break through an error in the loop body.
  local ok = pcall(function()
    for _ in app:stream({}, cfg("err"), "updates") do error("boom") end
  end)
  check(not ok, "error in the loop body")
  eq(app:invoke(nil, cfg("err")).log, { "a", "b", "c" }, "thread usable after a loop error")

  -- Abandoned iterators (no to-be-closed variable) are stopped by the collector.
  for i = 1, 3 do
    local it = app:stream({}, cfg("gc" .. i), "updates")
    it()
  end
  collectgarbage()
  collectgarbage()
  eq(app:invoke(nil, cfg("gc1")).log, { "a", "b", "c" }, "thread usable after a collected stream")

  -- An error mid-run is raised by the iterator when reached.
  local bad = sst.StateGraph{ log = sst.reducers.append }
  bad:add_node("a", function() return { log = { "a" } } end)
  bad:add_node("b", function() error("node b failed") end)
  bad:add_edge(sst.START, "a")
  bad:add_edge("a", "b")
  local got = {}
  local ok2, err = pcall(function()
    for chunk in bad:compile():stream({}, nil, "updates") do got[#got + 1] = chunk end
  end)
  check(not ok2, "the iterator raises the run's error")
  check(tostring(err):find("node b failed", 1, true) ~= nil, "the error text: " .. tostring(err))
  eq(got, { { a = { log = { "a" } } } }, "chunks before the error")

  -- A stream inside a coroutine, and a nested invoke in the loop body.
  local co = coroutine.wrap(function()
    local n = 0
    for _ in app:stream({}, cfg("co"), "updates") do
      n = n + 1
      coroutine.yield(n)
    end
    return -1
  end)
  eq({ co(), co(), co(), co() }, { 1, 2, 3, -1 }, "a stream across coroutine yields")
  local inner
  for _ in chain({ "x" }):compile():stream({}, nil, "updates") do
    inner = app:invoke({}, cfg("nested")).log
  end
  eq(inner, { "a", "b", "c" }, "an invoke inside the loop body")
end)

-- A live stream of a run whose nodes run on two workers (worker states).
T.case("live stream with workers", function()
  local n = 0
  for _ in workers_app:stream({}, nil, "updates") do n = n + 1 end
  eq(n, 5, "an updates chunk per node")
  for _ in workers_app:stream({}, nil, "updates") do break end
  local last
  for chunk in workers_app:stream({}, nil, "values") do last = chunk end
  eq(#last.log, 5, "the last values chunk")
end)

-- The modes "tasks" and "checkpoints" are accepted by name.
-- (Their chunks are the graph layer's; only the names are checked here.)
T.case("tasks and checkpoints modes", function()
  local app = chain({ "a" }):compile{ checkpointer = sst.MemorySaver() }
  local n = 0
  local ok, err = pcall(function()
    for mode, chunk in app:stream({ log = sst.array{} }, cfg("tc"), { "tasks", "checkpoints" }) do
      check(mode == "tasks" or mode == "checkpoints", "mode name " .. tostring(mode))
      check(type(chunk) == "table", "chunk")
      n = n + 1
    end
  end)
  check(ok or not tostring(err):find("unknown stream mode", 1, true), "modes accepted: " .. tostring(err))
  check(not ok or n > 0, "tasks/checkpoints chunks")
  local tasks = 0
  for chunk in chain({ "a" }):compile():stream({}, nil, "tasks") do
    check(type(chunk) == "table", "tasks chunk")
    tasks = tasks + 1
  end
  check(tasks > 0, "tasks chunks")
end)

-- ctx.execution_info: LangGraph's runtime.execution_info, kept across retries.
T.case("ctx.execution_info", function()
  local infos = {}
  local g = sst.StateGraph{ x = sst.reducers.replace }
  g:add_node("n", function(state, input, ctx)
    infos[#infos + 1] = ctx.execution_info
    if #infos == 1 then error("flaky") end
    return { x = 1 }
  end, { retry = { max_attempts = 2, initial_interval = 0.001, jitter = false, retry_on = { "SST_ETASK" } } })
  g:add_edge(sst.START, "n")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({ x = 0 }, { configurable = { thread_id = "ei" }, run_id = "r1" })
  eq(#infos, 2, "two attempts")
  local a, b = infos[1] or {}, infos[2] or {}
  eq({ a.node_attempt, b.node_attempt }, { 1, 2 }, "node_attempt")
  eq(a.thread_id, "ei", "thread_id")
  eq(a.run_id, "r1", "run_id")
  eq(a.checkpoint_ns, "n:" .. tostring(a.task_id), "checkpoint_ns: the task's, as LangGraph's")
  check(type(a.task_id) == "string" and #a.task_id == 32 and a.task_id == b.task_id, "task_id")
  check(type(a.checkpoint_id) == "string" and #a.checkpoint_id > 0, "checkpoint_id")
  check(math.type(a.node_first_attempt_time) == "float", "node_first_attempt_time")
  eq(b.node_first_attempt_time, a.node_first_attempt_time, "the first attempt's time on the retry")
  -- No checkpointer: no checkpoint id, no thread id.
  local plain = {}
  local p = sst.StateGraph{ x = sst.reducers.replace }
  p:add_node("n", function(state, input, ctx) plain = ctx.execution_info end)
  p:add_edge(sst.START, "n")
  p:compile():invoke({ x = 0 })
  eq(plain.checkpoint_id, "", "no checkpoint id without a thread")
  eq(plain.thread_id, nil, "no thread id without a thread")
  eq(plain.node_attempt, 1, "node_attempt without a thread")
end)

-- Custom events reach the loop while the node runs (the loop body runs between
-- two ctx.emit calls of one node), and a break inside stops the run.
T.case("custom events are live", function()
  local loop_saw, node_saw = {}, nil
  local g = sst.StateGraph{ x = sst.reducers.replace }
  g:add_node("n", function(state, input, ctx)
    ctx.emit("a")
    node_saw = #loop_saw
    ctx.emit("b")
    return { x = 1 }
  end)
  g:add_edge(sst.START, "n")
  local app = g:compile()
  local modes = {}
  for mode, chunk in app:stream({ x = 0 }, nil, { "custom", "updates" }) do
    modes[#modes + 1] = mode
    if mode == "custom" then loop_saw[#loop_saw + 1] = chunk end
  end
  eq(node_saw, 1, "the loop had the first event before the node went on")
  eq(loop_saw, { "a", "b" }, "custom chunks")
  eq(modes, { "custom", "custom", "updates" }, "custom before the superstep's updates")
  local n = 0
  for _ in app:stream({ x = 0 }, nil, "custom") do n = n + 1; break end
  eq(n, 1, "break after the first custom chunk")
end)

-- The "messages" mode for messages written to the state, and push_message.
T.case("messages mode and push_message", function()
  local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
  g:add_node("a", function() return { messages = { role = "assistant", content = "one" } } end)
  g:add_node("b", function(state)
    sst.push_message({ role = "assistant", content = "pushed", id = "p1" })
    return { messages = state.messages } -- read before: streamed once only
  end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  local app = g:compile()
  local chunks, values = {}, nil
  for mode, chunk in app:stream({ messages = { { role = "user", content = "hi", id = "h" } } },
                                { configurable = { graph_id = "gid", secret = "s" } }, { "messages", "values" }) do
    if mode == "messages" then chunks[#chunks + 1] = chunk else values = chunk end
  end
  eq(#chunks, 2, "two message chunks")
  local c1, c2 = chunks[1] or {}, chunks[2] or {}
  eq({ c1[1] and c1[1].content, c2[1] and c2[1].content }, { "one", "pushed" }, "contents")
  eq(c1[1], values.messages[2], "the message as the state holds it (its id)")
  eq({ c1[2].langgraph_node, c1[2].langgraph_step, c1[2].graph_id }, { "a", 1, "gid" }, "metadata")
  eq(c1[2].secret, nil, "configurable keys outside LangGraph's list stay out")
  eq(#values.messages, 3, "state")
  local ok, err = pcall(function()
    local h = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
    h:add_node("n", function() sst.push_message({ role = "ai", content = "x" }) end)
    h:add_edge(sst.START, "n")
    h:compile():invoke({})
  end)
  check(not ok and tostring(err):find("Message ID is required", 1, true), "no id: " .. tostring(err))
  raises(function() sst.push_message({ role = "ai", content = "x", id = "1" }) end, "inside a node",
         "push_message outside a node")
end)

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
