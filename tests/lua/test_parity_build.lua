-- LangGraph-parity features (issue 14), checked through the Lua API.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq, raises = T.check, T.eq, T.raises

local function logger(name)
  return function() return { log = { name } } end
end
local function log_graph()
  return sst.StateGraph{ log = { reducer = sst.reducers.append, default = sst.array{} } }
end

-- set_entry_point / set_finish_point / set_conditional_entry_point (LangGraph's names).
do
  local g = log_graph()
  g:add_node("a", logger("a"))
  g:add_node("b", logger("b"))
  g:set_conditional_entry_point(function(s) return "go_b" end, { go_a = "a", go_b = "b" })
  g:set_finish_point("b")
  g:add_edge("a", sst.END)
  eq(g:compile():invoke({}).log, { "b" }, "conditional entry point with a path map")
  local h = log_graph()
  h:add_node("a", logger("a"))
  h:set_entry_point("a")
  h:set_finish_point("a")
  eq(h:compile():invoke({}).log, { "a" }, "set_entry_point / set_finish_point")
  local m = log_graph()
  m:add_node("a", logger("a"))
  m:add_node("b", logger("b"))
  m:set_conditional_entry_point(function() return { "a", "b" } end)
  eq(m:compile():invoke({}).log, { "a", "b" }, "conditional entry point to several nodes")
end

-- add_edge({a, b}, END): a join into END.
do
  local g = log_graph()
  g:add_node("a", logger("a"))
  g:add_node("b", logger("b"))
  g:add_edge(sst.START, "a")
  g:add_edge(sst.START, "b")
  g:add_edge({ "a", "b" }, sst.END)
  local app = g:compile()
  eq(app:invoke({}).log, { "a", "b" }, "join into END")
  check(app:draw_mermaid():find("a --> __end__", 1, true) ~= nil, "join into END drawn")
end

-- add_sequence{ {name, fn [, opts]}, ... }
do
  local g = log_graph()
  g:add_sequence{ { "one", logger("one") }, { "two", logger("two") }, { "three", logger("three") } }
  g:add_edge(sst.START, "one")
  eq(g:compile():invoke({}).log, { "one", "two", "three" }, "add_sequence runs in order")
  raises(function() log_graph():add_sequence{} end, "at least one node", "empty sequence")
  raises(function() log_graph():add_sequence{ { "x" } } end, "add_node 'x'", "sequence without fn")
  raises(function() log_graph():add_sequence{ "x" } end, "item 1", "sequence item not a list")
end

-- A callable table as a router (and as a node).
do
  local router = setmetatable({ target = "b" }, { __call = function(self, s) return self.target end })
  local node = setmetatable({}, { __call = function(self, s) return { log = { "callable" } } end })
  local g = log_graph()
  g:add_node("a", node)
  g:add_node("b", logger("b"))
  g:add_edge(sst.START, "a")
  g:add_conditional_edges("a", router)
  eq(g:compile():invoke({}).log, { "callable", "b" }, "callable router and node")
  local e = log_graph()
  e:add_node("b", logger("b"))
  e:set_conditional_entry_point(router)
  eq(e:compile():invoke({}).log, { "b" }, "callable conditional entry point")
  raises(function() log_graph():add_conditional_edges("a", {}) end, "callable table",
         "a plain table is not a router")
end

-- A node reached only through goto needs no ends (a compile warning, not an error).
do
  local g = log_graph()
  g:add_node("a", function() return sst.Command{ update = { log = { "a" } }, ["goto"] = "hidden" } end)
  g:add_node("hidden", logger("hidden"))
  g:add_edge(sst.START, "a")
  local app = g:compile()
  eq(app:invoke({}).log, { "a", "hidden" }, "goto-only node runs")
  check(app:draw_mermaid():find("hidden", 1, true) ~= nil, "goto-only node drawn")
end

-- No retry unless a node asks; retry = true / a table / retry_on.
do
  local calls
  local function flaky(fail_times, err)
    return function()
      calls = calls + 1
      if calls <= fail_times then error(err or "flaky") end
      return { log = { "ok" } }
    end
  end
  local function app_with(opts, fail_times, err)
    local g = log_graph()
    g:add_node("n", flaky(fail_times, err), opts)
    g:add_edge(sst.START, "n")
    return g:compile()
  end
  calls = 0
  raises(function() app_with(nil, 1):invoke({}) end, "flaky", "no retry by default")
  eq(calls, 1, "one attempt by default")
  calls = 0
  eq(app_with({ retry = true }, 1):invoke({}).log, { "ok" }, "retry = true retries")
  eq(calls, 2, "retry = true: second attempt succeeds")
  calls = 0
  local fast = { initial_interval = 0, jitter = false }
  raises(function() app_with({ retry = fast }, 10):invoke({}) end, "after 3 attempts",
         "a retry table starts from the default policy (3 attempts)")
  eq(calls, 3, "three attempts")
  local seen
  calls = 0
  local pol = { initial_interval = 0, jitter = false, max_attempts = 5,
                retry_on = function(e) seen = e; return false end }
  raises(function() app_with({ retry = pol }, 10, "nope"):invoke({}) end, "nope", "retry_on false")
  eq(calls, 1, "retry_on false: no retry")
  eq(seen and seen.code, "SST_ETASK", "retry_on gets the error's code")
  check(seen and tostring(seen.message):find("nope", 1, true) ~= nil, "retry_on gets the message")
  check(seen and not tostring(seen.message):find("stack traceback", 1, true), "without traceback")
  eq(seen and seen.node, "n", "retry_on gets the node")
  calls = 0
  pol.retry_on = function(e) return tostring(e.message):find("again", 1, true) ~= nil end
  eq(app_with({ retry = pol }, 2, "again"):invoke({}).log, { "ok" }, "retry_on true retries")
  eq(calls, 3, "retry_on true: until success")
  calls = 0
  pol.retry_on = { "SST_EIO" }
  raises(function() app_with({ retry = pol }, 10):invoke({}) end, "flaky", "retry_on kinds: no match")
  eq(calls, 1, "retry_on kinds: a Lua error (SST_ETASK) is not SST_EIO")
  calls = 0
  pol.retry_on = { "SST_EIO", "SST_ETASK" }
  eq(app_with({ retry = pol }, 2):invoke({}).log, { "ok" }, "retry_on kinds: match")
  eq(calls, 3, "retry_on kinds: retried")
  raises(function() app_with({ retry = { retry_on = { "SST_NOPE" } } }, 0) end,
         "unknown error kind 'SST_NOPE'", "unknown error kind")
  raises(function() app_with({ retry = { max_attemps = 2 } }, 0) end,
         "unknown option 'max_attemps'", "unknown retry field")
  raises(function() app_with({ retry = "yes" }, 0) end, "expected true or a table", "bad retry")
end

-- Unknown options are errors naming the option; interrupt lists accept "*".
do
  raises(function() log_graph():add_node("x", logger("x"), { cache_policy = {} }) end,
         "add_node 'x': unknown option 'cache_policy'", "add_node unknown option")
  raises(function() sst.StateGraph({}, { input = {} }) end,
         "StateGraph: unknown option 'input'", "StateGraph unknown option")
  raises(function() sst.StateGraph({}, { input_schema = "foo" }) end,
         "input_schema: expected a list of field names", "input_schema must be a list")
  local g = sst.StateGraph({ a = sst.reducers.replace, b = sst.reducers.replace },
                           { input_schema = { "a" }, output_schema = { "b" } })
  g:add_node("x", logger("x"), { retry_policy = { max_attempts = 2 }, destinations = { "y" } })
  g:add_node("y", logger("y"))
  g:add_edge(sst.START, "x")
  check(g:compile():draw_mermaid():find("x -. \"goto\" .-> y", 1, true) ~= nil,
        "destinations is LangGraph's name for ends")
  local h = log_graph()
  h:add_sequence{ { "a", logger("a") }, { "b", logger("b") } }
  h:add_edge(sst.START, "a")
  local app = h:compile{ checkpointer = sst.MemorySaver(), interrupt_after = { "*" } }
  local cfg = { configurable = { thread_id = "star" } }
  eq(app:invoke({}, cfg).log, { "a" }, "interrupt_after {'*'} stops after a")
  eq(app:invoke(nil, cfg).log, { "a", "b" }, "and after b")
end

-- defer = true: a triggered deferred node waits until no other task is left.
do
  for _, waiting in ipairs({ true, false }) do
    local g = log_graph()
    g:add_node("rewrite", logger("rewrite"))
    g:add_node("r1", logger("r1"))
    g:add_node("r2", logger("r2"))
    g:add_node("analyze", logger("analyze"))
    g:add_node("qa", logger("qa"), { defer = true })
    g:add_edge(sst.START, "rewrite")
    g:add_edge("rewrite", "r1")
    g:add_edge("rewrite", "r2")
    g:add_edge("r1", "analyze")
    if waiting then
      g:add_edge({ "r1", "r2" }, "qa")
    else
      g:add_edge("r1", "qa")
      g:add_edge("r2", "qa")
    end
    g:set_finish_point("qa")
    local what = "defer (waiting edge " .. tostring(waiting) .. ")"
    eq(g:compile():invoke({}).log, { "rewrite", "r1", "r2", "analyze", "qa" }, what)
    -- An interrupt while qa waits keeps it waiting across the resume.
    local app = g:compile{ checkpointer = sst.MemorySaver(), interrupt_after = { "r1" } }
    local cfg = { configurable = { thread_id = "defer" } }
    eq(app:invoke({}, cfg).log, { "rewrite", "r1", "r2" }, what .. ": interrupted")
    eq(app:get_state(cfg).next, { "analyze" }, what .. ": next is analyze, qa waits")
    eq(app:invoke(nil, cfg).log, { "rewrite", "r1", "r2", "analyze", "qa" }, what .. ": resumed")
  end
end

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
