-- The memory limit of Lua states, run by tests/unit/test_lua.c through
-- sst_lua_script_load: each state superstep creates (the loading one and one
-- per worker) may hold up to compile{memory_limit} bytes, 1 GiB by default. A
-- node that passes it fails with a clear error and no retry, its thread keeps
-- what committed, and the state stays usable for a resume.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq, raises = T.check, T.eq, T.raises

local MiB = 1024 * 1024
local default_limit = sst.memory_limit() -- before any compile{memory_limit}

-- Builds a table of up to 3e8 integers (several GB without a limit). Gives up
-- at 512 MiB so that a limit that does not work fails the test quickly.
local function grow()
  local t = {}
  for i = 1, 300000000 do
    t[i] = i
    if i % 1000000 == 0 and collectgarbage("count") > 512 * 1024 then
      error("grew past 512 MiB: the memory limit was not applied")
    end
  end
  return #t
end

-- Graph 1: "first" commits, then "grow" allocates without bound while allowed.
local allow_growth = true
local g = sst.StateGraph{ n = sst.reducers.replace, done = sst.reducers.replace }
g:add_node("first", function() return { n = 1 } end)
g:add_node("grow", function()
  if allow_growth then grow() end
  return { done = true }
end)
g:add_edge(sst.START, "first")
g:add_edge("first", "grow")
g:add_edge("grow", sst.END)
local app = g:compile{ checkpointer = sst.MemorySaver(), memory_limit = 64 * MiB }

-- Graph 2: a node that runs graph 1 inside itself, on the same state.
local gn = sst.StateGraph{ x = sst.reducers.replace }
gn:add_node("outer", function()
  app:invoke({ n = 0 }, { configurable = { thread_id = "nested" } }) -- a checkpointer needs one
  return { x = 1 }
end)
gn:add_edge(sst.START, "outer")
local appn = gn:compile{}

-- Graph 3: a fan-out on 2 workers. The task on the main state waits until a
-- task has run in a worker state (a flag file), so a worker state is used.
local function exists(path)
  local f = io.open(path)
  if f then f:close() return true end
  return false
end
local gw = sst.StateGraph{ where = { reducer = sst.reducers.append, default = {} },
                           limits = { reducer = sst.reducers.append, default = {} },
                           flag = sst.reducers.replace, grow = sst.reducers.replace }
gw:add_node("work", function(state)
  if sst.worker then
    local f = assert(io.open(state.flag, "w"))
    f:write("x")
    f:close()
    if state.grow then grow() end
  else
    local deadline = os.time() + 30
    while not exists(state.flag) and os.time() < deadline do end
  end
  return { where = { sst.worker and "worker" or "main" }, limits = { sst.memory_limit() } }
end)
gw:add_conditional_edges(sst.START, function() return { sst.Send("work", 1), sst.Send("work", 2) } end)
local appw = gw:compile{ workers = 2 }

if not sst.worker then
  eq(default_limit, 1024 * MiB, "the default limit is 1 GiB")
  eq(sst.memory_limit(), 64 * MiB, "compile{memory_limit} sets the state's limit")

  local cfg = { configurable = { thread_id = "t" } }
  raises(function() app:invoke({ n = 0 }, cfg) end, "memory limit of 67108864 bytes exceeded",
         "passing the limit fails the node")
  raises(function() app:invoke({ n = 0 }, { configurable = { thread_id = "t2" } }) end,
         "vertex 'grow' failed after 1 attempt", "the limit is not retried and names the node")
  local st = app:get_state(cfg)
  eq(st.values, { n = 1 }, "the first node's update is committed")
  eq(st.next, { "grow" }, "grow is still to run")
  check(collectgarbage("count") < 16 * 1024, "the failed node's memory is given back")

  raises(function() appn:invoke({}) end, "memory limit of 67108864 bytes exceeded",
         "a nested run's failure reaches the outer node")
  raises(function() appn:invoke({}) end, "vertex 'outer' failed after 1 attempt",
         "the outer node is not retried either")

  allow_growth = false
  local final = app:invoke(nil, cfg)
  eq(final, { n = 1, done = true }, "a resume in the same state completes")
  eq(appn:invoke({}), { x = 1 }, "the nested run completes once the node stops growing")

  -- Worker states: the script's compile{memory_limit} applies in each of them too.
  local flag = os.tmpname()
  os.remove(flag)
  local out = appw:invoke({ flag = flag })
  os.remove(flag)
  local places = {}
  for _, w in ipairs(out.where) do places[w] = true end
  check(places.worker, "a task ran in a worker state: " .. sst.json_encode(out.where))
  eq(out.limits, { 64 * MiB, 64 * MiB }, "each state has the limit")
  raises(function() appw:invoke({ flag = flag, grow = true }) end,
         "memory limit of 67108864 bytes exceeded", "a worker state enforces its limit")
  os.remove(flag)

  raises(function() g:compile{ memory_limit = 0 } end, "memory_limit must be", "bad memory_limit")
  raises(function() g:compile{ memory_limit = "big" } end, "memory_limit", "bad memory_limit type")
end

T.finish()
return app
