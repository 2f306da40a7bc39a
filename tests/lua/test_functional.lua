-- The functional API through Lua (docs/functional.md) where LangGraph's
-- ported tests do not reach: tasks on worker Lua states in parallel, a task
-- made inside the entrypoint (pinned to its state), nested tasks, errors,
-- interrupts in a task answered across worker states, timeouts, the cache,
-- custom and messages streams from tasks, and misuse. Run by
-- tests/unit/test_lua.c through sst_lua_script_load (so worker states
-- exist); worker states load this file again only to find the tasks, and
-- the checks run in the main state (superstep.worker is false there).
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq, raises, case = T.check, T.eq, T.raises, T.case

-- Which Lua state runs a task: each state makes its own table here.
local STATE = tostring({}):gsub("table: ", "")

local where = sst.task("where", function(i)
  sst.sleep(0.05) -- long enough for the four calls to overlap
  return { i = i, state = STATE, worker = sst.worker and true or false }
end)

local leaf = sst.task("leaf", function(x) return x .. "!" end)
local branch = sst.task("branch", function(x)
  return leaf(x):result() .. leaf(x .. x):result()
end)

local boom = sst.task("boom", function() error("This is a test exception") end)

local ask = sst.task("ask", function(q)
  local a = sst.interrupt(q)
  return { asked = q, answer = a, state = STATE }
end)

local slow = sst.task{ name = "slow", timeout = 0.05 }(function()
  sst.sleep(2)
  return "late"
end)

local squares = 0
local square = sst.task{ name = "square", cache_policy = { ttl = 60 } }(function(x)
  squares = squares + 1
  return x * x
end)

local chatty = sst.task("chatty", function(x)
  sst.get_stream_writer()({ from = "chatty", x = x })
  sst.push_message({ id = "m-" .. x, role = "assistant", content = "said " .. x })
  return x
end)

-- Tasks named by their source (docs/functional.md, "Names").
local twice = sst.task(function(x) return 2 * x end)
local function halve(x) return x // 2 end
local halve_task = sst.task(halve)
local named = {}
named.inc = sst.task{ retry = false }(function(x) return x + 1 end)
local renamed = sst.task{ name = "given" }(function(x) return x end)

-- Four `where` tasks started, then joined: the script's graph too.
local function fan_app()
  return sst.entrypoint{ name = "fan", workers = 4 }(function(n)
    local fs = {}
    for i = 1, n do fs[i] = where(i) end
    local out = {}
    for i = 1, n do out[i] = fs[i]:result() end
    return out
  end)
end

if sst.worker then
  return -- worker states only need the tasks above
end

case("parallel tasks on worker states", function()
  local out = fan_app():invoke(4)
  eq(#out, 4, "four results")
  local states, workers = {}, 0
  for i, r in ipairs(out) do
    eq(r.i, i, "result " .. i .. " in submission order")
    states[r.state] = true
    if r.worker then workers = workers + 1 end
  end
  local distinct = 0
  for _ in pairs(states) do distinct = distinct + 1 end
  check(distinct >= 2, "the tasks ran in at least two Lua states, got " .. distinct)
  check(workers >= 1, "at least one task ran in a worker state")
end)

case("a task made inside the entrypoint runs in its state", function()
  local app = sst.entrypoint{ name = "local", workers = 4 }(function(x)
    local here = sst.task("here", function(y) return { y = y, state = STATE } end)
    return here(x):result()
  end)
  local r = app:invoke(7)
  eq(r, { state = STATE, y = 7 }, "the pinned task ran in the main state")
end)

case("nested tasks and errors", function()
  local app = sst.entrypoint{ name = "nest", workers = 2 }(function(x)
    local ok, err = pcall(function() return boom():result() end)
    return { nested = branch(x):result(), ok = ok, err = tostring(type(err) == "table" and err.message or err) }
  end)
  local r = app:invoke("a")
  eq(r.nested, "a!aa!", "a task's own tasks")
  eq(r.ok, false, "a failed task raises in its caller")
  check(r.err:find("This is a test exception", 1, true) ~= nil, "the task's error: " .. r.err)
  -- an error nobody catches fails the run, naming it
  local bad = sst.entrypoint{ name = "bad" }(function() return boom():result() end)
  raises(function() bad:invoke(1) end, "This is a test exception", "the run fails")
end)

case("interrupts in tasks on worker states, answered by id", function()
  local app = sst.entrypoint{ name = "q", workers = 4, checkpointer = sst.MemorySaver() }(
    function()
      local a, b = ask("first?"), ask("second?")
      return { a:result(), b:result() }
    end)
  local cfg = { configurable = { thread_id = "q1" } }
  local r = app:invoke({}, cfg)
  eq(#r.__interrupt__, 2, "both tasks asked")
  local answers = {}
  for _, i in ipairs(r.__interrupt__) do answers[i.id] = "re " .. i.value end
  local st = app:get_state(cfg)
  eq(#st.tasks, 1, "one task pending: the entrypoint")
  eq(#st.tasks[1].interrupts, 2, "its tasks' interrupts are shown on it")
  r = app:invoke(sst.Command{ resume = answers }, cfg)
  eq(r[1].answer, "re first?", "the first task's answer")
  eq(r[2].answer, "re second?", "the second task's answer")
end)

case("a task's timeout", function()
  local app = sst.entrypoint{ name = "t" }(function()
    local ok, err = pcall(function() return slow():result() end)
    return { ok = ok, code = type(err) == "table" and err.code or tostring(err) }
  end)
  local r = app:invoke(1)
  eq(r.ok, false, "a task past its timeout fails")
  eq(r.code, "SST_ETIMEOUT", "with SST_ETIMEOUT")
end)

case("the cache across threads and clear_task_cache", function()
  local app = sst.entrypoint{ name = "c", cache = sst.InMemoryCache() }(function(x)
    return square(x):result()
  end)
  for i = 1, 3 do
    eq(app:invoke(5, { configurable = { thread_id = "c" .. i } }), 25, "square " .. i)
  end
  eq(squares, 1, "computed once")
  app:clear_task_cache("square")
  eq(app:invoke(5), 25, "after clearing")
  eq(squares, 2, "computed again")
end)

case("custom and messages streams from a task", function()
  local app = sst.entrypoint{ name = "s" }(function(x) return chatty(x):result() end)
  local seen = {}
  for mode, chunk in app:stream(3, nil, { "custom", "messages", "updates" }) do
    seen[#seen + 1] = mode
    if mode == "custom" then eq(chunk, { from = "chatty", x = 3 }, "the custom event") end
    if mode == "messages" then
      eq(chunk[1].content, "said 3", "the message")
      eq(chunk[2].langgraph_node, "chatty", "its node is the task")
    end
  end
  eq(seen, { "custom", "messages", "updates", "updates" }, "the chunks in order")
end)

case("default names: the function's, else the variable it is assigned to", function()
  eq({ twice.name, halve_task.name, named.inc.name, renamed.name },
     { "twice", "halve", "inc", "given" }, "task names")
  local function made() return sst.task(function(x) return x end) end
  eq(made().name, "task", "a task made on a line that names nothing")
  local workflow = sst.entrypoint(function(x)
    return twice(x):result() + halve_task(x):result() + named.inc(x):result() + renamed(x):result()
  end)
  local chunks = {}
  for chunk in workflow:stream(4) do chunks[#chunks + 1] = chunk end
  eq(chunks, { { twice = 8 }, { halve = 2 }, { inc = 5 }, { given = 4 }, { workflow = 19 } },
     "updates under the tasks' and the entrypoint's names")
end)

case("misuse", function()
  raises(function() return leaf("x") end, "call it inside an entrypoint", "a task outside a run")
  raises(function() sst.task{ name = "x", timeout = -1 }(function() end) end, "timeout",
         "a bad timeout")
  raises(function() sst.task{ name = "x", retry = { max_attempts = 0 } }(function() end) end,
         "max_attempts", "a bad retry")
  raises(function() sst.task{ name = "x", retry = { max_interval = -1 } }(function() end) end,
         "task: retry.max_interval must be a number from 0 to 1e9", "a negative interval, as for nodes")
  raises(function() sst.task{ nme = "x" }(function() end) end, "unknown option 'nme'",
         "an unknown option")
  local kept
  local app = sst.entrypoint{ name = "m" }(function(x)
    kept = leaf(x)
    return kept:result()
  end)
  eq(app:invoke("y"), "y!", "the entrypoint's result")
  raises(function() return kept:result() end, "after the function that called its task returned",
         "a future kept past its caller")
end)

T.finish()

-- The script's graph for sst_lua_script_load: the fan-out above.
return fan_app()
