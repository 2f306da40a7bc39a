-- The LangGraph-parity fixes (issue 14), each checked through the Lua API.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq = T.check, T.eq

local function cfg(id, cp) return { configurable = { thread_id = id, checkpoint_id = cp } } end

-- A thread id of any length: two 10 000-byte ids that differ only at their
-- end keep their own runs (their run keys and interrupt ids differ).
T.case("long thread ids", function()
  local g = sst.StateGraph{ answer = sst.reducers.replace }
  g:add_node("ask", function() return { answer = sst.interrupt("name?") } end)
  g:add_edge(sst.START, "ask")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  local a, b = string.rep("t", 9999) .. "a", string.rep("t", 9999) .. "b"
  local ra = app:invoke({}, cfg(a))
  local rb = app:invoke({}, cfg(b))
  check(ra.__interrupt__[1].id ~= rb.__interrupt__[1].id, "long thread ids: distinct interrupt ids")
  eq(app:invoke(sst.Command{ resume = "A" }, cfg(a)).answer, "A", "long thread id a resumes")
  eq(app:invoke(sst.Command{ resume = "B" }, cfg(b)).answer, "B", "long thread id b resumes")
  eq(app:get_state(cfg(a)).values.answer, "A", "long thread id a state")
end)

-- Checkpoint ids strictly increase within a thread across invokes (each
-- invoke of the Lua app opens the thread anew; the id clock restarted).
T.case("ids increase across invokes", function()
  local g = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
  g:add_node("inc", function() return { n = 1 } end)
  g:add_edge(sst.START, "inc")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  for _ = 1, 40 do app:invoke({ n = 0 }, cfg("ids")) end
  local h = app:get_state_history(cfg("ids"))
  eq(#h, 40 * 3, "input, start and node checkpoints per invoke, as in LangGraph")
  local ok = true
  for i = 1, #h - 1 do
    ok = ok and h[i].checkpoint_id > h[i + 1].checkpoint_id and h[i].parent_id == h[i + 1].checkpoint_id
  end
  check(ok, "ids strictly increase along the chain across invokes")
end)

-- durability = "exit" writes exactly one checkpoint per invoke (it wrote the
-- input and first loop checkpoints as well); an interrupted exit-mode run
-- still resumes from that one checkpoint.
T.case("durability exit", function()
  local g = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
  g:add_node("a", function() return { n = 1 } end)
  g:add_node("b", function() return { n = sst.interrupt("more?") } end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  local app = g:compile{ checkpointer = sst.MemorySaver(), durability = "exit" }
  local r = app:invoke({ n = 0 }, cfg("exit"))
  eq(#r.__interrupt__, 1, "exit mode: interrupted in b")
  eq(#app:get_state_history(cfg("exit")), 1, "exit mode: one checkpoint for the first invoke")
  eq(app:get_state(cfg("exit")).values.n, 1, "exit mode: a's update kept")
  eq(app:invoke(sst.Command{ resume = 10 }, cfg("exit")).n, 11, "exit mode: resumed")
  eq(#app:get_state_history(cfg("exit")), 2, "exit mode: one checkpoint for the resume")
  app:invoke({ n = 0 }, cfg("exit"))
  eq(#app:get_state_history(cfg("exit")), 3, "exit mode: one checkpoint per invoke")
end)

-- invoke(Command{resume, update, goto}) applies all three (update and goto
-- were dropped): the update reaches the state before the resumed node
-- runs, the goto target runs beside it.
T.case("Command resume update goto", function()
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("ask", function(s) return { log = { "ask:" .. sst.interrupt("q") .. ":" .. #s.log } } end,
             { ends = { "extra" } })
  g:add_node("extra", function() return { log = { "extra" } } end)
  g:add_edge(sst.START, "ask")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({ log = { "start" } }, cfg("cmd"))
  local r = app:invoke(sst.Command{ resume = "yes", update = { log = { "upd" } }, ["goto"] = "extra" },
                       cfg("cmd"))
  eq(r.log, { "start", "upd", "ask:yes:2", "extra" }, "Command resume + update + goto")
end)

-- After interrupt_before on X, update_state then invoke(nil) runs X (it
-- stopped before X again).
T.case("interrupt_before then update_state", function()
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("a", function() return { log = { "a" } } end)
  g:add_node("x", function(s) return { log = { "x saw " .. #s.log } } end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "x")
  local app = g:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "x" } }
  app:invoke({ log = sst.array{} }, cfg("ib"))
  eq(app:get_state(cfg("ib")).next, { "x" }, "stopped before x")
  app:update_state(cfg("ib"), { log = { "edited" } })
  eq(app:get_state(cfg("ib")).next, { "x" }, "x still next after update_state")
  eq(app:invoke(nil, cfg("ib")).log, { "a", "edited", "x saw 2" }, "x runs after update_state")
end)

-- update_state on a checkpoint whose next task is a wait-for-all join keeps
-- it (next was overwritten, so the join's node never ran).
T.case("update_state keeps a join", function()
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("a", function() return { log = { "a" } } end)
  g:add_node("b", function() return { log = { "b" } } end)
  g:add_node("c", function() return { log = { "c" } } end)
  g:add_node("join", function(s) return { log = { "join:" .. #s.log } } end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  g:add_edge("a", "c")
  g:add_edge({ "b", "c" }, "join")
  local app = g:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "join" } }
  app:invoke({ log = sst.array{} }, cfg("join"))
  eq(app:get_state(cfg("join")).next, { "join" }, "stopped before the join")
  app:update_state(cfg("join"), { log = { "edit" } }, "b")
  eq(app:get_state(cfg("join")).next, { "join" }, "the join stays next")
  eq(app:invoke(nil, cfg("join")).log, { "a", "b", "c", "edit", "join:4" }, "the join runs")
end)

-- A replay from an older checkpoint writes a "fork" checkpoint first; an
-- interrupt hit during the replay resumes with the thread id alone; the
-- answers stored on the replayed checkpoint are not reused (the node asks
-- its first question again).
T.case("replay writes a fork", function()
  local g = sst.StateGraph{ answers = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("a", function() return { answers = { "a" } } end)
  g:add_node("ask", function()
    local one = sst.interrupt("first?")
    local two = sst.interrupt("second?")
    return { answers = { one, two } }
  end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "ask")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  app:invoke({ answers = sst.array{} }, cfg("replay"))
  app:invoke(sst.Command{ resume = "1" }, cfg("replay"))
  eq(app:invoke(sst.Command{ resume = "2" }, cfg("replay")).answers, { "a", "1", "2" }, "first run")
  local before_ask
  for _, s in ipairs(app:get_state_history(cfg("replay"))) do
    if s.next[1] == "ask" then before_ask = s end
  end
  local n = #app:get_state_history(cfg("replay"))
  local r = app:invoke(nil, before_ask.config)
  eq(r.__interrupt__[1].value, "first?", "the replay asks the first question again")
  local h = app:get_state_history(cfg("replay"))
  eq(#h, n + 1, "one new checkpoint: the fork")
  eq(h[1].metadata.source, "fork", "its source")
  eq(h[1].parent_config.configurable.checkpoint_id, before_ask.config.configurable.checkpoint_id,
     "the fork hangs off the replayed checkpoint")
  app:invoke(sst.Command{ resume = "x" }, cfg("replay"))
  eq(app:invoke(sst.Command{ resume = "y" }, cfg("replay")).answers, { "a", "x", "y" },
     "the replay resumes by thread id")
end)

-- A node raising an error object { code, message } fails with that code and
-- message (LangGraph's exception kinds), so retry_on and callers tell kinds
-- apart; a plain error is SST_ETASK.
T.case("node error objects keep their code", function()
  local g = sst.StateGraph{}
  g:add_node("bad", function(s)
    if s.kind == "plain" then error("plain failure") end
    error({ code = "SST_EINVAL", message = "bad value: 42" })
  end)
  g:add_edge(sst.START, "bad")
  local app = g:compile()
  local ok, e = pcall(app.invoke, app, { kind = "object" })
  check(not ok and e.code == "SST_EINVAL", "the object's code: " .. tostring(e and e.code))
  check(not ok and tostring(e):find("bad value: 42", 1, true) ~= nil, "the object's message")
  ok, e = pcall(app.invoke, app, { kind = "plain" })
  check(not ok and e.code == "SST_ETASK" and tostring(e):find("plain failure", 1, true) ~= nil,
        "a plain error: SST_ETASK")
end)

-- An interrupted run returns the state with the writes of the tasks that
-- succeeded beside the interrupted one (LangGraph's last values), and an
-- update_state on that checkpoint keeps those writes.
T.case("interrupted siblings' writes", function()
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("one", function() return { log = { "one" } } end)
  g:add_node("two", function() return { log = { sst.interrupt("why?") } } end)
  g:add_edge(sst.START, "one")
  g:add_edge(sst.START, "two")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  local r = app:invoke({ log = sst.array{} }, cfg("siblings"))
  eq(r.log, { "one" }, "the sibling's write is in the interrupted result")
  app:update_state(cfg("siblings"), nil, sst.END)
  local st = app:get_state(cfg("siblings"))
  eq(st.values.log, { "one" }, "update_state keeps the sibling's write")
  eq(st.next, sst.array{}, "END clears the tasks")
end)

-- invoke(..., { interrupt_before = ... }) replaces the compiled lists for
-- that invoke (LangGraph's invoke(interrupt_before=...)); unknown names are
-- errors naming them.
T.case("invoke-time interrupts", function()
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("a", function() return { log = { "a" } } end)
  g:add_node("b", function() return { log = { "b" } } end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  local app = g:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "a" } }
  app:invoke({ log = sst.array{} }, cfg("rt1"), { interrupt_before = { "b" } })
  eq(app:get_state(cfg("rt1")).next, { "b" }, "stopped before b, not a")
  eq(app:invoke(nil, cfg("rt1"), { interrupt_before = sst.array{} }).log, { "a", "b" },
     "an empty list: no stop")
  T.raises(function() app:invoke({ log = sst.array{} }, cfg("rt2"), { interrupt_after = { "zz" } }) end,
           "interrupt_after names unknown node 'zz'", "unknown node")
end)

-- A Command sent as a Send's payload reaches the node as a Command (it was
-- plain data), and a Send read back has LangGraph's fields node and arg.
T.case("Command as a Send payload", function()
  local COMMAND = getmetatable(sst.Command{})
  local seen = {}
  local g = sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("fan", function() return nil end)
  g:add_node("w", function(_, input)
    if getmetatable(input) == COMMAND then
      seen[#seen + 1] = input["goto"].node .. ":" .. tostring(input["goto"].arg)
      return sst.Command{ update = { log = { "cmd" } }, ["goto"] = input["goto"] }
    end
    return { log = { "w" .. tostring(input) } }
  end)
  g:add_edge(sst.START, "fan")
  g:add_conditional_edges("fan", function() return { sst.Send("w", sst.Command{ ["goto"] = sst.Send("w", 7) }) } end)
  local r = g:compile():invoke({ log = sst.array{} })
  eq(seen, { "w:7" }, "the node saw a Command whose goto is a Send with node and arg")
  eq(r.log, { "cmd", "w7" }, "its goto ran")
end)

-- An untracked field (LangGraph's UntrackedValue) is in the run's state and
-- result but never in a checkpoint.
T.case("untracked fields", function()
  local g = sst.StateGraph{ kept = sst.reducers.replace,
                            scratch = { reducer = sst.reducers.replace, untracked = true } }
  g:add_node("a", function(s) return { kept = "k:" .. tostring(s.scratch) } end)
  g:add_edge(sst.START, "a")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  local r = app:invoke({ scratch = "tmp" }, cfg("untracked"))
  eq(r, { kept = "k:tmp", scratch = "tmp" }, "the run sees it")
  eq(app:get_state(cfg("untracked")).values, { kept = "k:tmp" }, "the checkpoint does not")
end)

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
