-- The LangGraph-parity fixes (issue 14), each checked through the Lua API.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq = T.check, T.eq

local function cfg(id, cp) return { configurable = { thread_id = id, checkpoint_id = cp } } end

-- A thread id of any length: two 10 000-byte ids that differ only at their
-- end keep their own runs (their run keys and interrupt ids differ).
do
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
end

-- Checkpoint ids strictly increase within a thread across invokes (each
-- invoke of the Lua app opens the thread anew; the id clock restarted).
do
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
end

-- durability = "exit" writes exactly one checkpoint per invoke (it wrote the
-- input and first loop checkpoints as well); an interrupted exit-mode run
-- still resumes from that one checkpoint.
do
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
end

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
