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
  raises(function() log_graph():add_node("x", logger("x"), { cache_key = {} }) end,
         "add_node 'x': unknown option 'cache_key'", "add_node unknown option")
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

-- A root state: StateGraph(reducer) (LangGraph's StateGraph(Annotated[list, operator.add])).
do
  local function node(name)
    return function(state, input)
      check(type(state) == "table" or type(state) == "userdata", name .. " sees the value itself")
      return { input == nil and name or name .. "|" .. tostring(input) }
    end
  end
  local g = sst.StateGraph(sst.reducers.append)
  g:add_node("a", node("a"))
  g:add_node("b", node("b"))
  g:add_node("c", function(state) return { sst.Command{ update = { "c1" } }, { "c2" } } end)
  g:add_edge(sst.START, "a")
  g:add_conditional_edges("a", function(state)
    return { sst.Send("b", #state), sst.Send("b", #state + 1) }
  end)
  g:add_edge("b", "c")
  local app = g:compile()
  eq(app:invoke({ "0" }), { "0", "a", "b|2", "b|3", "c1", "c2" }, "root state: invoke")
  local chunks = {}
  for chunk in app:stream({ "0" }, nil, "updates") do chunks[#chunks + 1] = chunk end
  eq(chunks[1], { a = { "a" } }, "root state: updates chunks hold the value")
  eq(chunks[#chunks], { c = { { "c1" }, { "c2" } } }, "root state: two writes, two values")
  local sum = sst.StateGraph(function(a, b) return (a or 0) + b end, { default = 10 })
  sum:add_node("one", function(n) return n + 1 end)
  sum:add_edge(sst.START, "one")
  eq(sum:compile():invoke(5), 10 + 5 + 16, "root state: a Lua reducer and a default")
  raises(function() sst.StateGraph({ x = sst.reducers.replace }, { default = 1 }) end,
         "only a root state has one", "default without a root")
end

-- A reducer function taking one parameter is refused (LangGraph's "Invalid reducer").
do
  local ok, err = pcall(sst.StateGraph, { hello = function(a) return a end })
  check(not ok, "one-parameter reducer refused")
  eq(type(err) == "table" and err.code, "SST_EINVAL", "invalid reducer: kind")
  check(tostring(err):find("field 'hello': Invalid reducer", 1, true) ~= nil,
        "invalid reducer names the field: " .. tostring(err))
  check(pcall(sst.StateGraph, { hello = function(...) return ... end }), "a vararg reducer is fine")
end

-- add_node(..., { input_schema = {...} }): the node sees only those fields.
do
  local seen
  local g = sst.StateGraph{ a = sst.reducers.replace, b = sst.reducers.replace }
  g:add_node("n", function(state) seen = sst.to_table(state); return { b = 2 } end,
             { input_schema = { "a" } })
  g:add_edge(sst.START, "n")
  eq(g:compile():invoke({ a = 1, b = 1 }), { a = 1, b = 2 }, "input_schema: the update applies")
  eq(seen, { a = 1 }, "input_schema: the node sees only a")
  raises(function() g:add_node("m", function() end, { input_schema = "a" }) end,
         "input_schema: expected a list of field names", "input_schema: bad type")
end

-- set_node_defaults{ retry = ... } and lists of retry policies.
do
  local calls = {}
  local function flaky(name, fails, code)
    return function()
      calls[name] = (calls[name] or 0) + 1
      if calls[name] <= fails then error({ code = code or "SST_ETASK", message = name .. " failed" }) end
      return { log = { name } }
    end
  end
  local fast = { initial_interval = 0, jitter = false }
  local g = log_graph()
  g:add_node("before", flaky("before", 2))
  g:set_node_defaults{ retry = { initial_interval = 0, jitter = false, retry_on = { "SST_ETASK" } } }
  g:add_node("after", flaky("after", 2))
  g:add_node("own", flaky("own", 1), { retry = false })
  g:add_edge(sst.START, "before")
  g:add_edge(sst.START, "after")
  g:add_edge(sst.START, "own")
  raises(function() g:compile():invoke({}) end, "own failed", "set_node_defaults: retry = false opts out")
  eq(calls, { before = 3, after = 3, own = 1 }, "set_node_defaults: nodes added before and after")
  calls = {}
  local l = log_graph()
  local p1 = { initial_interval = 0, jitter = false, max_attempts = 2, retry_on = { "SST_EINVAL" } }
  local p2 = { initial_interval = 0, jitter = false, max_attempts = 3, retry_on = function(e)
    return e.code == "SST_ENOTFOUND"
  end }
  l:add_node("a", flaky("a", 2, "SST_ENOTFOUND"), { retry = { p1, p2 } })
  l:add_node("b", flaky("b", 1, "SST_EIO"), { retry = { p1, p2 } })
  l:add_edge(sst.START, "a")
  l:add_edge("a", "b")
  raises(function() l:compile():invoke({}) end, "b failed", "retry list: no policy matches")
  eq(calls, { a = 3, b = 1 }, "retry list: the second policy retries a")
  raises(function() log_graph():set_node_defaults{ retries = true } end,
         "unknown option 'retries'", "set_node_defaults: unknown option")
  local _ = fast
end

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
