-- Node policies through the Lua API (issue 16): timeouts stop spinning Lua
-- code through the debug hook, error handlers see what failed, options are
-- checked.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq = T.check, T.eq

local function one_node(fn, opts, compile_opts)
  local g = sst.StateGraph{ x = sst.reducers.replace }
  g:add_node("n", fn, opts)
  g:add_edge(sst.START, "n")
  return g:compile(compile_opts)
end

T.case("a spinning Lua node stops at its run timeout", function()
  local app = one_node(function() while true do end end, { timeout = 0.05 })
  -- Stopped by the limit (a node that never stopped would hang the test): no bound on
  -- time here, which a busy machine or a sanitizer build stretches (docs/testing.md).
  local ok, err = pcall(app.invoke, app, { x = 1 })
  check(not ok, "the run fails")
  eq(err.code, "SST_ETIMEOUT", "kind")
  eq(err.node, "n", "node")
  eq(err.kind, "run", "which limit")
  eq(err.run_timeout, 0.05, "run_timeout")
  check(err.elapsed >= 0.05, "stopped after the limit, not before")
end)

T.case("pcall inside the node does not swallow the timeout", function()
  local app = one_node(function()
    for _ = 1, 3 do pcall(function() while true do end end) end
    while true do end
  end, { timeout = { idle_timeout = 0.03 } })
  local ok, err = pcall(app.invoke, app, { x = 1 })
  check(not ok and err.code == "SST_ETIMEOUT" and err.kind == "idle", "idle timeout: " .. tostring(err))
end)

T.case("emitting is progress for the idle timeout, unless refresh_on = heartbeat", function()
  -- 40 steps of a 0.1 s sleep, an emit after each: each gap is 20 times below the idle
  -- timeout (sleeps need no CPU, so a loaded machine hardly stretches them; a busy loop
  -- on os.clock() did, past the timeout, with two hogs and four tests on two cores), and
  -- the whole run (4 s at least) is twice the timeout.
  local function busy(_, _, ctx)
    for _ = 1, 40 do
      sst.sleep(0.1)
      ctx.emit({ tick = true })
    end
    return { x = 2 }
  end
  eq(one_node(busy, { timeout = { idle_timeout = 2.0 } }):invoke({ x = 1 }).x, 2, "auto: survives")
  local ok, err = pcall(function()
    return one_node(busy, { timeout = { idle_timeout = 2.0, refresh_on = "heartbeat" } }):invoke({ x = 1 })
  end)
  check(not ok and err.code == "SST_ETIMEOUT", "heartbeat only: times out")
end)

T.case("an error handler gets the state and NodeError, and its update is kept", function()
  local seen
  local app = one_node(function() error("bad input", 0) end, {
    error_handler = function(state, err)
      seen = err
      return { x = state.x * 10 }
    end })
  eq(app:invoke({ x = 4 }).x, 40, "the handler's update")
  eq(seen.node, "n", "error.node")
  eq(seen.error.code, "SST_ETASK", "error.error.code")
  eq(seen.error.message, "bad input", "error.error.message")
  eq(tostring(seen.error), "bad input", "tostring(error.error)")
end)

T.case("a timeout reaches the error handler with its details", function()
  local app = one_node(function() while true do end end, {
    timeout = 0.03,
    error_handler = function(_, err) return { x = err.error.kind } end })
  eq(app:invoke({ x = 1 }).x, "run", "handled")
end)

T.case("cache_policy: hits replay the writes, key functions, SqliteCache across apps", function()
  local calls = 0
  local function build(cache, policy)
    local g = sst.StateGraph{ q = sst.reducers.replace, a = sst.reducers.replace, seen = sst.reducers.append }
    g:add_node("work", function(state)
      calls = calls + 1
      return sst.Command{ update = { a = state.q .. "!" }, ["goto"] = "after" }
    end, { cache_policy = policy, ends = { "after" } })
    g:add_node("after", function(state) return { seen = { state.a } } end)
    g:add_edge(sst.START, "work")
    return g:compile{ cache = cache }
  end
  local app = build(sst.InMemoryCache(), {})
  eq(app:invoke({ q = "x" }).seen, { "x!" }, "miss")
  eq(app:invoke({ q = "x" }).seen, { "x!" }, "hit: update and goto replayed")
  eq(calls, 1, "ran once")
  app:invoke({ q = "y" })
  eq(calls, 2, "another input misses")
  app:clear_cache({ "work" })
  app:invoke({ q = "x" })
  eq(calls, 3, "cleared")
  -- a key function: only the first letter counts
  calls = 0
  local keyed = build(sst.InMemoryCache(), { key = function(input) return input.q:sub(1, 1) end })
  keyed:invoke({ q = "apple" })
  eq(keyed:invoke({ q = "avocado" }).a, "apple!", "same key: replayed")
  eq(calls, 1, "key function decides")
  -- SqliteCache: a second app on the same file hits at once
  local path = os.tmpname()
  calls = 0
  build(sst.SqliteCache(path), {}):invoke({ q = "z" })
  build(sst.SqliteCache(path), {}):invoke({ q = "z" })
  eq(calls, 1, "SqliteCache shared across apps")
  os.remove(path)
  local ok, err = pcall(function() build(sst.InMemoryCache(), { ttl = -1 }) end)
  check(not ok and tostring(err):find("ttl", 1, true), "bad ttl: " .. tostring(err))
  ok, err = pcall(function() build(42, {}) end)
  check(not ok and tostring(err):find("cache must be", 1, true), "bad cache: " .. tostring(err))
end)

T.case("set_node_defaults: cache_policy, timeout and error_handler together", function()
  local calls = 0
  local g = sst.StateGraph{ x = sst.reducers.replace }
  g:set_node_defaults{ cache_policy = {}, timeout = 0.05,
                       error_handler = function(_, err) return { x = "handled " .. err.node } end }
  g:add_node("a", function(state) calls = calls + 1; return { x = state.x + 1 } end)
  g:add_node("b", function() while true do end end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  local app = g:compile{ cache = sst.InMemoryCache() }
  eq(app:invoke({ x = 1 }).x, "handled b", "b timed out and was handled")
  eq(app:invoke({ x = 1 }).x, "handled b", "again")
  eq(calls, 1, "a cached by default")
end)

T.case("bad options are refused, naming them", function()
  local g = sst.StateGraph{ x = sst.reducers.replace }
  local function refused(fn, text)
    local ok, err = pcall(fn)
    check(not ok and tostring(err):find(text, 1, true) ~= nil, text .. ": " .. tostring(err))
  end
  refused(function() g:add_node("a", function() end, { timeout = -1 }) end, "timeout")
  refused(function() g:add_node("a", function() end, { timeout = { idle = 1 } }) end, "unknown option 'idle'")
  refused(function() g:add_node("a", function() end, { timeout = { refresh_on = "x", run_timeout = 1 } }) end,
          "refresh_on")
  refused(function() g:add_node("a", function() end, { error_handler = 42 }) end, "error_handler")
  refused(function() sst.Send("a", {}, { timeout = "soon" }) end, "timeout")
  g:add_node("b", function() end)
  g:add_edge(sst.START, "b")
  refused(function() g:compile{ step_timeout = 0 } end, "step_timeout")
end)

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
