-- Subgraphs through the Lua API (issue 15), and the fixes they brought.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq = T.check, T.eq

local function cfg(id, cp, ns)
  return { configurable = { thread_id = id, checkpoint_id = cp, checkpoint_ns = ns } }
end
local function log() return { reducer = sst.reducers.append, default = sst.array{} } end

-- A child asking a question: its state is its own, its namespace "node:task id".
local function asking_child(runs)
  local c = sst.StateGraph{ log = log() }
  c:add_node("a", function() runs.a = runs.a + 1; return { log = { "a" } } end)
  c:add_node("ask", function() return { log = { "answer:" .. sst.interrupt("ok?") } } end)
  c:add_edge(sst.START, "a")
  c:add_edge("a", "ask")
  return c
end

T.case("interrupt in a subgraph, resumed by id", function()
  local runs = { a = 0 }
  local p = sst.StateGraph{ log = log() }
  p:add_node("child", asking_child(runs):compile())
  p:add_edge(sst.START, "child")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  local r = app:invoke({}, cfg("r1"))
  eq(#r.__interrupt__, 1, "one interrupt at the root")
  eq(r.__interrupt__[1].value, "ok?", "its value")
  local snap = app:get_state(cfg("r1"), { subgraphs = true })
  local child = snap.tasks[1].state
  eq(child.next, { "ask" }, "the child's snapshot is nested, stopped at ask")
  check(child.config.configurable.checkpoint_ns:match("^child:%x+$") ~= nil, "its namespace")
  local flat = app:get_state(cfg("r1"))
  eq(flat.tasks[1].state.configurable.checkpoint_ns, child.config.configurable.checkpoint_ns,
     "without subgraphs the task points at the child's config")
  -- The child's own history, read through its namespace.
  local h = app:get_state_history(cfg("r1", nil, child.config.configurable.checkpoint_ns))
  check(#h >= 3 and h[1].next[1] == "ask", "the child's history")
  local done = app:invoke(sst.Command{ resume = { [r.__interrupt__[1].id] = "yes" } }, cfg("r1"))
  eq(done.log[#done.log], "answer:yes", "the answer reached the child")
  eq(runs.a, 1, "a ran once: the child went on from its checkpoint")
end)

T.case("subgraph invoked inside a node", function()
  local runs = { a = 0 }
  local child = asking_child(runs):compile()
  local p = sst.StateGraph{ items = log() }
  p:add_node("call", function(s)
    local out = child:invoke({ log = { "from:" .. #s.items } })
    return { items = { out.log[#out.log] } }
  end)
  p:add_edge(sst.START, "call")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  local r = app:invoke({ items = {} }, cfg("in-node"))
  eq(r.__interrupt__[1].value, "ok?", "the child's interrupt ends the node")
  eq(app:invoke(sst.Command{ resume = "sure" }, cfg("in-node")).items, { "answer:sure" },
     "the resumed node gets the child's result")
  eq(runs.a, 1, "the child's first node ran once")
end)

T.case("Command PARENT from a nested child", function()
  local c = sst.StateGraph{ who = sst.reducers.replace }
  c:add_node("hand", function()
    return sst.Command{ graph = sst.PARENT, ["goto"] = "writer", update = { who = "researcher" } }
  end)
  c:add_edge(sst.START, "hand")
  local p = sst.StateGraph{ who = sst.reducers.replace, log = log() }
  p:add_node("research", c:compile())
  p:add_node("writer", function(s) return { log = { "wrote for " .. s.who } } end)
  p:add_node("never", function() return { log = { "never" } } end)
  p:add_edge(sst.START, "research")
  p:add_edge("research", "never")
  eq(p:compile():invoke({}), { who = "researcher", log = { "wrote for researcher" } },
     "the goto replaced research's edge")
  local bad = sst.StateGraph{ who = sst.reducers.replace }
  bad:add_node("hand", function() return sst.Command{ graph = "elsewhere" } end)
  bad:add_edge(sst.START, "hand")
  local ok, err = pcall(function() return bad:compile():invoke({}) end)
  check(not ok and tostring(err.message):find("superstep.PARENT") ~= nil, "an unknown graph")
end)

-- A parent whose node "child" runs a child whose node "inner" appends "inner".
local function parent_of_inner()
  local c = sst.StateGraph{ log = log() }
  c:add_node("inner", function() return { log = { "inner" } } end)
  c:add_edge(sst.START, "inner")
  local p = sst.StateGraph{ log = log() }
  p:add_node("child", c:compile())
  p:add_edge(sst.START, "child")
  return p
end

T.case("stream with subgraphs", function()
  local p = parent_of_inner()
  local app = p:compile()
  local seen = {}
  for ns, chunk in app:stream({}, nil, "updates", { subgraphs = true }) do
    seen[#seen + 1] = { ns, chunk }
  end
  eq(#seen, 2, "the child's update, then the parent's")
  check(#seen[1][1] == 1 and seen[1][1][1]:match("^child:%x+$") ~= nil, "the child's namespace")
  eq(seen[1][2], { inner = { log = { "inner" } } }, "the child's update")
  eq(seen[2], { sst.array{}, { child = { log = { "inner" } } } }, "the root's, namespace {}")
  local n = 0
  for ns, mode, chunk in app:stream({}, nil, { "updates", "values" }, { subgraphs = true }) do
    check(type(ns) == "table" and type(mode) == "string" and chunk ~= nil, "ns, mode, chunk")
    n = n + 1
  end
  check(n >= 4, "several modes with namespaces")
end)

T.case("checkpointer true keeps a subgraph's state", function()
  local c = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
  c:add_node("inc", function() return { n = 1 } end)
  c:add_edge(sst.START, "inc")
  local p = sst.StateGraph{ total = sst.reducers.replace }
  p:add_node("agent", c:compile{ checkpointer = true })
  p:add_edge(sst.START, "agent")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({}, cfg("keep"))
  app:invoke({}, cfg("keep"))
  eq(app:get_state(cfg("keep", nil, "agent")).values, { n = 2 }, "namespace agent: two runs")
end)

-- Two subgraph calls in one node: each has its own namespace, so each answer
-- reaches its own child and a finished child is not run again.
T.case("two subgraph calls in one node", function()
  local asked = 0
  local c = sst.StateGraph{ x = sst.reducers.replace }
  c:add_node("ask", function() asked = asked + 1; return { x = sst.interrupt("q?") } end)
  c:add_edge(sst.START, "ask")
  local child = c:compile()
  local q = sst.StateGraph{ out = sst.reducers.replace }
  q:add_node("two", function()
    local a = child:invoke({})
    local b = child:invoke({})
    return { out = a.x .. "+" .. b.x }
  end)
  q:add_edge(sst.START, "two")
  local app = q:compile{ checkpointer = sst.MemorySaver() }
  check(app:invoke({}, cfg("two")).__interrupt__ ~= nil, "the first asks")
  check(app:invoke(sst.Command{ resume = "A" }, cfg("two")).__interrupt__ ~= nil, "the second asks")
  eq(app:invoke(sst.Command{ resume = "B" }, cfg("two")), { out = "A+B" }, "each got its answer")
  eq(asked, 4, "each child asked once and answered once")
end)

-- A subgraph that keeps no checkpoints cannot be resumed: an error, not a
-- question asked forever.
T.case("checkpointer false cannot resume", function()
  local c = sst.StateGraph{ x = sst.reducers.replace }
  c:add_node("ask", function() return { x = sst.interrupt("q?") } end)
  c:add_edge(sst.START, "ask")
  local p = sst.StateGraph{ x = sst.reducers.replace }
  p:add_node("child", c:compile{ checkpointer = false })
  p:add_edge(sst.START, "child")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  eq(app:invoke({}, cfg("nockpt")).__interrupt__[1].value, "q?", "the interrupt surfaces")
  local ok, err = pcall(app.invoke, app, sst.Command{ resume = "a" }, cfg("nockpt"))
  check(not ok and tostring(err.message):find("keeps no checkpoints") ~= nil, "a clear error")
end)

T.case("drawing with xray", function()
  local c = sst.StateGraph{ x = sst.reducers.replace }
  c:add_node("c1", function() return {} end)
  c:add_edge(sst.START, "c1")
  local p = sst.StateGraph{ x = sst.reducers.replace }
  p:add_node("kid", c:compile())
  p:add_edge(sst.START, "kid")
  local app = p:compile()
  check(not app:draw_mermaid():find("c1", 1, true), "plain: the subgraph is one node")
  check(app:draw_mermaid{ xray = true }:find("c1", 1, true) ~= nil, "xray: its nodes")
  check(app:draw_dot{ xray = 1 }:find("cluster", 1, true) ~= nil, "DOT: a cluster")
  eq(app:draw_mermaid{ xray = 0 }, app:draw_mermaid(), "xray 0 is the plain drawing")
  check(not pcall(app.draw_mermaid, app, { xray = "deep" }), "a bad level")
  local g = app:get_graph{ xray = true }
  eq(g.nodes[3].id, "kid:c1", "get_graph: the child's node, its START and END trimmed")
  eq(g:to_json(), { nodes = g.nodes, edges = g.edges }, "to_json: the same data")
  check(g:draw_mermaid():find("subgraph kid\n\tkid\\3ac1(c1)", 1, true) ~= nil,
        "get_graph's draw_mermaid: LangGraph's text")
  eq(g.draw_dot(), app:draw_dot{ xray = true }, "get_graph's draw_dot")
  eq(app:get_graph().draw_dot(), app:draw_dot(), "get_graph without xray")
  check(not pcall(app.get_graph, app, { xray = "deep" }), "get_graph: a bad level")
end)

T.case("saver:list", function()
  local p = parent_of_inner()
  local saver = sst.MemorySaver()
  local app = p:compile{ checkpointer = saver }
  app:invoke({}, cfg("list"))
  local all, root = saver:list(cfg("list")), saver:list(cfg("list", nil, ""))
  eq(#root, 3, "the root's: input, loop, after child")
  eq(#all, 6, "every namespace: the child's three too")
  eq(root[1].config.configurable.checkpoint_ns, "", "root records")
  eq(#saver:list(cfg("list"), { limit = 2 }), 2, "limit")
  check(not pcall(saver.list, saver, {}), "a config without thread_id")
end)

-- Time travel: replaying the parent from an older checkpoint, a subgraph that
-- keeps its state (checkpointer = true) starts from its state as of that point.
T.case("replay loads a kept subgraph's state as of then", function()
  local seen = {}
  local c = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
  c:add_node("inc", function(s) seen[#seen + 1] = s.n; return { n = 1 } end)
  c:add_edge(sst.START, "inc")
  local p = sst.StateGraph{ step = sst.reducers.replace }
  p:add_node("before", function() return { step = "before" } end)
  p:add_node("agent", c:compile{ checkpointer = true })
  p:add_edge(sst.START, "before")
  p:add_edge("before", "agent")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  for _ = 1, 3 do app:invoke({}, cfg("tt")) end
  eq(seen, { 0, 1, 2 }, "three runs, the memory grows")
  -- each invoke's checkpoint before "before", newest first
  local hist = app:get_state_history(cfg("tt"))
  local matches = {}
  for _, s in ipairs(hist) do
    if s.next[1] == "before" and s.metadata.source == "loop" then matches[#matches + 1] = s end
  end
  eq(#matches, 3, "one per invoke")
  seen = {}
  app:invoke(nil, matches[2].config) -- the 2nd invoke's
  eq(seen, { 1 }, "the agent starts from its state after the 1st invoke")
  seen = {}
  app:invoke(nil, matches[3].config) -- the 1st invoke's
  eq(seen, { 0 }, "before any run: no state")
  seen = {}
  app:invoke({}, cfg("tt"))
  eq(seen, { 1 }, "then the latest: the replay's own result")
end)

-- Time travel to a subgraph's own checkpoint: the root runs from the config a
-- nested snapshot gives (its checkpoint_map), and the subgraph goes on from
-- that checkpoint, asking its question again without re-running what came before.
T.case("time travel to a subgraph checkpoint", function()
  local runs = { a = 0 }
  local p = sst.StateGraph{ log = log() }
  p:add_node("child", asking_child(runs):compile())
  p:add_edge(sst.START, "child")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({}, cfg("travel"))
  local sub = app:get_state(cfg("travel"), { subgraphs = true }).tasks[1].state.config
  check(type(sub.configurable.checkpoint_map) == "table" and sub.configurable.checkpoint_map[""] ~= nil,
        "the subgraph's config maps its ancestors' checkpoints")
  eq(app:invoke(sst.Command{ resume = "first" }, cfg("travel")).log, { "a", "answer:first" }, "answered")
  local again = app:invoke(nil, sub)
  eq(again.__interrupt__[1].value, "ok?", "back at the question")
  eq(runs.a, 1, "a did not run again")
  eq(app:get_state_history(cfg("travel"))[1].metadata.source, "fork", "the root forked")
  eq(app:invoke(sst.Command{ resume = "second" }, cfg("travel")).log, { "a", "answer:second" },
     "the new answer on the new branch")
  -- update_state on the subgraph's config returns the config of its new checkpoint
  local fork = app:update_state(sub, { log = { "edited" } })
  check(fork.configurable.checkpoint_ns == sub.configurable.checkpoint_ns, "the subgraph's namespace")
  check(fork.configurable.checkpoint_map[""] == sub.configurable.checkpoint_map[""], "its ancestors")
  eq(app:invoke(nil, fork).__interrupt__[1].value, "ok?", "running from the edit asks again")
end)

-- A join's barrier is the engine's: a pending task's result shows the node's own writes.
T.case("snapshot results hide barriers", function()
  local g = sst.StateGraph{ log = log() }
  g:add_node("a", function() return { log = { "a" } } end)
  g:add_node("b", function() return { log = { "b:" .. sst.interrupt("b?") } } end)
  g:add_node("c", function() return { log = { "c" } } end)
  g:add_edge(sst.START, "a")
  g:add_edge(sst.START, "b")
  g:add_edge({ "a", "b" }, "c")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({}, cfg("barrier"))
  local tasks = app:get_state(cfg("barrier")).tasks
  local a = tasks[1].name == "a" and tasks[1] or tasks[2]
  eq(a.result, { log = { "a" } }, "a's result without __barriers__")
end)

-- A dynamic interrupt beside a node named in interrupt_before: the resume does
-- not stop before that node again (its superstep passed the check already).
T.case("interrupt_before is not asked twice", function()
  local g = sst.StateGraph{ log = log() }
  g:add_node("a", function() return { log = { "a:" .. sst.interrupt("a?") } } end)
  g:add_node("b", function() return { log = { "b" } } end)
  g:add_edge(sst.START, "a")
  g:add_edge(sst.START, "b")
  local app = g:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "b" } }
  app:invoke({}, cfg("twice"))
  local r = app:invoke(nil, cfg("twice"))
  eq(r.__interrupt__[1].value, "a?", "a asks")
  r = app:invoke(sst.Command{ resume = "x" }, cfg("twice"))
  eq(r.__interrupt__, nil, "no stop before b again")
  eq(r.log, { "a:x", "b" }, "both ran")
end)

T.case("two kept children of one node: namespaces node and node|1", function()
  local function kept(tag)
    local c = sst.StateGraph{ seen = log() }
    c:add_node("n", function() return { seen = { tag } } end)
    c:add_edge(sst.START, "n")
    return c:compile{ checkpointer = true }
  end
  local a, b = kept("a"), kept("b")
  local p = sst.StateGraph{ x = sst.reducers.replace }
  p:add_node("both", function()
    return { x = #a:invoke({}).seen .. "," .. #b:invoke({}).seen }
  end)
  p:add_edge(sst.START, "both")
  local app = p:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({}, cfg("kept2"))
  eq(app:invoke({}, cfg("kept2")).x, "2,2", "each kept child grows on its own")
  eq(app:get_state(cfg("kept2", nil, "both")).values.seen, { "a", "a" }, "the first at 'both'")
  eq(app:get_state(cfg("kept2", nil, "both|1")).values.seen, { "b", "b" }, "the second at 'both|1'")
end)

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
