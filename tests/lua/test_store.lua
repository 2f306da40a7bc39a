-- The long-term store through the Lua API (docs/store.md), beyond the ports
-- of LangGraph's store tests (tests/lua/langgraph): bad input, Lua embed
-- functions on worker threads, ctx.store in nodes, lifetimes. Run by
-- tests/unit/test_lua.c through sst_lua_script_load: worker states load this
-- file again, so what they need is built first, the same way each time.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq = T.check, T.eq

local MiB = 1024 * 1024

-- A deterministic 4-dim embedding: letter counts of a, e, o and the rest.
-- It notes the state it ran in, which the node that caused the call reports.
local embedded_in = {}
local function embed4(texts)
  local out = {}
  for i, t in ipairs(texts) do
    local a, e, o = select(2, t:gsub("a", "")), select(2, t:gsub("e", "")), select(2, t:gsub("o", ""))
    out[i] = { a, e, o, #t - a - e - o + 0.5 }
  end
  embedded_in[#embedded_in + 1] = sst.worker and "worker" or "main"
  return out
end

local function exists(path)
  local f = io.open(path)
  if f then f:close() return true end
  return false
end

-- Waits on the main state until a task ran in a worker state (a flag file),
-- so that a run on workers surely uses a worker state (as test_api.lua).
local function meet_a_worker(flag)
  if sst.worker then
    local f = assert(io.open(flag, "w"))
    f:write("x")
    f:close()
  else
    local deadline = os.time() + 30
    while not exists(flag) and os.time() < deadline do end
  end
end

-- Graph 1: 16 tasks on 4 workers put and search through ctx.store, whose
-- index embeds with the Lua function above, in whatever state runs the task.
local shared = sst.InMemoryStore{ index = { dims = 4, embed = embed4, fields = { "text" } } }
local g1 = sst.StateGraph{ where = { reducer = sst.reducers.append, default = sst.array{} },
                           found = { reducer = sst.reducers.append, default = sst.array{} },
                           dims = { reducer = sst.reducers.append, default = sst.array{} },
                           items = sst.reducers.replace, flag = sst.reducers.replace }
g1:add_node("work", function(state, item, ctx)
  meet_a_worker(state.flag)
  embedded_in = {}
  ctx.store:put({ "docs", "w" }, "k" .. item, { text = string.rep("a", item) .. "bc" })
  local hits = ctx.store:search({ "docs" }, { query = string.rep("a", item) .. "bc", limit = 1 })
  return { where = embedded_in, found = { hits[1].key == "k" .. item },
           dims = { ctx.store.index_config.dims } }
end)
g1:add_conditional_edges(sst.START, function(state)
  local sends = {}
  for _, it in ipairs(state.items) do sends[#sends + 1] = sst.Send("work", it) end
  return sends
end)
local app1 = g1:compile{ store = shared, workers = 4 }

-- Graph 2: an embedder only the main state has (made below, after the graph,
-- in the main state only): a task in a worker state cannot find it.
local only_main
local worker_store = sst.InMemoryStore{ index = { dims = 4, embed = embed4 } }
local g2 = sst.StateGraph{ flag = sst.reducers.replace, n = sst.reducers.replace }
g2:add_node("work", function(state, item, ctx)
  meet_a_worker(state.flag)
  ctx.store:put({ "x" }, "k" .. item, { text = "hello" })
end)
g2:add_conditional_edges(sst.START, function(state)
  local sends = {}
  for i = 1, state.n do sends[i] = sst.Send("work", i) end
  return sends
end)

if sst.worker then
  return app1
end
only_main = sst.InMemoryStore{ index = { dims = 4, embed = sst.embeddings(embed4) } }
local app2 = g2:compile{ store = only_main, workers = 4 }

T.case("the embed function runs in the state of the thread that calls the store", function()
  local items = {}
  for i = 1, 16 do items[i] = i end
  local flag = os.tmpname()
  os.remove(flag)
  local out = app1:invoke({ items = items, flag = flag })
  os.remove(flag)
  local places = {}
  for _, w in ipairs(out.where) do places[w] = true end
  check(places.main and places.worker, "embedded in the main state and in a worker state: " ..
        sst.json_encode(out.where))
  eq(#out.where, 32, "a put and a search embed in each of 16 tasks")
  for i = 1, 16 do check(out.found[i], "task " .. i .. " found its own item first") end
  eq(out.dims[1], 4, "ctx.store.index_config.dims")
  eq(#shared:search({ "docs", "w" }, { limit = 100 }), 16, "every put landed in the one store")
end)

T.case("an embedder the worker states lack fails the task, naming it", function()
  local flag = os.tmpname()
  os.remove(flag)
  local ok, err = pcall(app2.invoke, app2, { n = 8, flag = flag })
  os.remove(flag)
  check(not ok, "the run fails")
  check(tostring(err):find("is missing in this thread's Lua state", 1, true),
        "names the missing embedder: " .. tostring(err))
end)

T.case("ctx.store is nil without a store; compile refuses a wrong store", function()
  local g = sst.StateGraph{ has = sst.reducers.replace }
  g:add_node("n", function(_, _, ctx) return { has = ctx.store ~= nil } end)
  g:add_edge(sst.START, "n")
  eq(g:compile{}:invoke({}).has, false, "no store")
  eq(g:compile{ store = sst.InMemoryStore() }:invoke({}).has, true, "a store")
  T.raises(function() g:compile{ store = {} } end, "store must be an InMemoryStore()", "bad store")
  T.raises(function() g:compile{ store = sst.MemorySaver() } end, "store must be", "a saver")
end)

T.case("a compiled graph keeps its store after the Lua values are gone", function()
  local function build()
    local store = sst.SqliteStore(":memory:", {
      index = { dims = 4, embed = function(texts) return embed4(texts) end, fields = { "text" } },
    })
    store:put({ "mem" }, "seed", { text = "oooo" })
    local g = sst.StateGraph{ keys = sst.reducers.replace }
    g:add_node("n", function(_, _, ctx)
      ctx.store:put({ "mem" }, "new", { text = "aaaa" })
      local hits = ctx.store:search({ "mem" }, { query = "aaa" })
      local keys = {}
      for i, h in ipairs(hits) do keys[i] = h.key end
      return { keys = keys }
    end)
    g:add_edge(sst.START, "n")
    return g:compile{ store = store }
  end
  local app = build()
  collectgarbage()
  collectgarbage()
  eq(app:invoke({}).keys, { "new", "seed" }, "the store and its embed function still work")
end)

T.case("items are plain tables", function()
  local s = sst.InMemoryStore()
  s:put({ "u", "1" }, "k", { a = { 1, 2 }, e = sst.object{}, n = sst.null })
  local item = s:get({ "u", "1" }, "k")
  eq(item.namespace, { "u", "1" }, "namespace")
  eq(item.key, "k", "key")
  eq(item.value, { a = { 1, 2 }, e = sst.object{}, n = sst.null }, "value")
  check(type(item.created_at) == "string" and item.created_at:match("^%d%d%d%d%-%d%d%-%d%dT"),
        "created_at: " .. tostring(item.created_at))
  eq(item.created_at, item.updated_at, "one put: one time")
  check(item.score == nil, "get: no score")
  item.value.a[1] = 99 -- a copy: the store keeps its own
  eq(s:get({ "u", "1" }, "k").value.a[1], 1, "a copy")
  local hits = s:search({ "u" }, { query = "ignored without an index" })
  check(hits[1].score == nil, "no index: score nil")
  eq(s:search({ "nobody" }), {}, "none")
  check(s:get({ "u", "1" }, "missing") == nil, "missing: nil")
  eq(s.index_config, nil, "no index config")
  s:delete({ "u", "1" }, "k")
  s:delete({ "u", "1" }, "k") -- absent: fine
  eq(s:list_namespaces(), {}, "a namespace goes with its last item")
end)

T.case("bad arguments raise error objects naming the problem", function()
  local s = sst.InMemoryStore{ index = { dims = 4, embed = embed4 } }
  local function fails(fn, code, text, what)
    local ok, err = pcall(fn)
    check(not ok, what .. ": expected an error")
    if ok then return end
    check(type(err) == "table" and err.code == code,
          what .. ": code " .. tostring(type(err) == "table" and err.code) .. " for " .. tostring(err))
    check(tostring(err):find(text, 1, true), what .. ": '" .. tostring(err) .. "' lacks " .. text)
  end
  fails(function() s:put("users", "k", {}) end, "SST_EINVAL", "namespace must be a list", "ns string")
  fails(function() s:put({ "a", 5 }, "k", {}) end, "SST_EINVAL", "label 2 is a number", "label")
  fails(function() s:put({ "a\0b" }, "k", {}) end, "SST_EINVAL", "NUL byte", "NUL label")
  fails(function() s:put({}, "k", {}) end, "SST_EINVAL", "cannot be empty", "empty ns")
  fails(function() s:put({ "a.b" }, "k", {}) end, "SST_EINVAL", "periods", "period")
  fails(function() s:put({ "a" }, 5, {}) end, "SST_EINVAL", "key must be a string", "key")
  fails(function() s:put({ "a" }, "k", "text") end, "SST_ETYPE", "value must be a table", "value")
  fails(function() s:put({ "a" }, "k") end, "SST_ETYPE", "value must be a table", "no value")
  fails(function() s:put({ "a" }, "k", { 1, 2 }) end, "SST_ETYPE", "must be an object", "a list")
  fails(function() s:put({ "a" }, "k", { f = print }) end, "SST_ETYPE", "cannot be stored", "fn")
  fails(function() s:put({ "a" }, "k", {}, { ttl = -1 }) end, "SST_EINVAL", "ttl must be", "ttl")
  fails(function() s:put({ "a" }, "k", {}, { index = "text" }) end, "SST_EINVAL",
        "index must be false or a list", "index")
  fails(function() s:put({ "a" }, "k", {}, { idx = false }) end, "SST_EINVAL",
        "unknown option 'idx'", "put option")
  fails(function() s:search({ "a" }, { filter = { x = { ["$regex"] = "a" } } }) end, "SST_EINVAL",
        "unknown operator '$regex'", "operator")
  fails(function() s:search({ "a" }, { filter = { x = { ["$gt"] = 1, y = 2 } } }) end,
        "SST_EINVAL", "unknown operator 'y'", "mixed operators")
  fails(function() s:search({ "a" }, { filter = "x" }) end, "SST_EINVAL", "filter must be a table",
        "filter")
  fails(function() s:search({ "a" }, { limit = 0 }) end, "SST_EINVAL", "limit must be", "limit")
  fails(function() s:search({ "a" }, { offset = -1 }) end, "SST_EINVAL", "offset must be", "offset")
  fails(function() s:search({ "a" }, { query = 5 }) end, "SST_EINVAL", "query must be", "query")
  fails(function() s:get({ "a" }, "k", { refresh_ttl = "yes" }) end, "SST_EINVAL",
        "refresh_ttl must be a boolean", "refresh_ttl")
  fails(function() s:list_namespaces{ max_depth = 0 } end, "SST_EINVAL", "max_depth", "max_depth")
  fails(function() s:list_namespaces{ prefix = "a" } end, "SST_EINVAL", "prefix must be", "prefix")
  fails(function() s:list_namespaces{ prefix = { "a.b" } } end, "SST_EINVAL", "periods", "label")
end)

T.case("bad store options and embed functions", function()
  local function fails(fn, text, what)
    local ok, err = pcall(fn)
    check(not ok, what .. ": expected an error")
    check(tostring(err):find(text, 1, true), what .. ": '" .. tostring(err) .. "' lacks " .. text)
  end
  fails(function() sst.InMemoryStore{ indx = {} } end, "unknown option 'indx'", "option")
  fails(function() sst.InMemoryStore{ index = { embed = embed4 } } end, "dims is required", "dims")
  fails(function() sst.InMemoryStore{ index = { dims = 4 } } end, "embed is required", "embed")
  fails(function() sst.InMemoryStore{ index = { dims = 4, embed = 5 } } end,
        "index.embed must be", "embed type")
  fails(function() sst.InMemoryStore{ index = { dims = 4, embed = embed4, fields = { 1 } } } end,
        "is not a string", "field type")
  fails(function() sst.InMemoryStore{ index = { dims = 4, embed = embed4, distance_type = "l2" } } end,
        "only \"cosine\"", "distance")
  fails(function() sst.InMemoryStore{ ttl = { default_ttl = 0 } } end, "default_ttl must be", "ttl")
  fails(function() sst.InMemoryStore{ ttl = { refresh_on_read = 1 } } end,
        "refresh_on_read must be a boolean", "refresh_on_read")
  fails(function() sst.SqliteStore() end, "expected a file path", "no path")
  fails(function() sst.SqliteStore("/nonexistent/dir/x.db") end, "", "unopenable file")
  fails(function() sst.embeddings(5) end, "expected a function(texts)", "embeddings")
  fails(function() sst.embeddings{ model = "m" } end, "", "no base_url")
  fails(function() sst.InMemoryStore{ index = { dims = 4, embed = "ftp://x" , model = "m" } } end,
        "", "a URL that is not http(s)")

  local function store_with(fn) return sst.InMemoryStore{ index = { dims = 2, embed = fn } } end
  local cases = {
    { function() return { { 1, 2, 3 } } end, "SST_EINVAL", "vector 1 has 3 numbers; the index has dims 2" },
    { function() return {} end, "SST_EINVAL", "returned 0 vectors for 1 texts" },
    { function() return "v" end, "SST_ETYPE", "returned a string" },
    { function() return { "v" } end, "SST_ETYPE", "vector 1 is a string" },
    { function() return { { 1, "x" } } end, "SST_ETYPE", "vector 1, element 2 is a string" },
    { function() return { { 0 / 0, 1 } } end, "SST_ERANGE", "non-finite" },
    { function() error("model unavailable") end, "SST_ETASK", "model unavailable" },
    { function() error({ code = "SST_ETIMEOUT", message = "slow model" }) end, "SST_ETIMEOUT",
      "slow model" },
  }
  for i, c in ipairs(cases) do
    local s = store_with(c[1])
    for _, call in ipairs{ function() s:put({ "a" }, "k", { t = "x" }) end,
                           function() s:search({ "a" }, { query = "q" }) end } do
      local ok, err = pcall(call)
      check(not ok and type(err) == "table" and err.code == c[2],
            "case " .. i .. ": code " .. tostring(type(err) == "table" and err.code or err))
      check(tostring(err):find(c[3], 1, true), "case " .. i .. ": " .. tostring(err))
      check(tostring(err):find("embed hook", 1, true), "case " .. i .. ": names the hook")
    end
    eq(s:search({ "a" }), {}, "case " .. i .. ": nothing stored")
  end
end)

T.case("embedders: functions, objects, callables, embeddings(fn), URLs", function()
  local calls = 0
  local obj = { embed_documents = function(self, texts)
    calls = calls + 1
    check(self.tag == "obj", "called as a method")
    return embed4(texts)
  end, tag = "obj" }
  local callable = setmetatable({}, { __call = function(_, texts) return embed4(texts) end })
  local shared_e = sst.embeddings(embed4)
  for what, e in pairs{ obj = obj, callable = callable, embeddings = shared_e } do
    local s1 = sst.InMemoryStore{ index = { dims = 4, embed = e, fields = "text" } }
    local s2 = sst.SqliteStore(":memory:", { index = { dims = 4, embed = e, text_fields = { "text" } } })
    for _, s in ipairs{ s1, s2 } do
      s:put({ "a" }, "1", { text = "aaaa" })
      s:put({ "a" }, "2", { text = "oooo" })
      s:put({ "a" }, "3", { other = "aaaa" }) -- no text: no vectors
      local hits = s:search({ "a" }, { query = "aaa" })
      eq({ hits[1].key, hits[2].key, hits[3].key }, { "1", "2", "3" }, what .. ": ranked")
      check(hits[1].score > 0.99 and hits[3].score == nil, what .. ": scores")
    end
    check(s1.index_config.embed == e, what .. ": index_config.embed")
  end
  check(calls > 0, "embed_documents called")
  -- An OpenAI-compatible endpoint: made at once, contacted only on use.
  local http = sst.embeddings{ base_url = "http://127.0.0.1:9/v1", model = "m", max_attempts = 1 }
  local s = sst.InMemoryStore{ index = { dims = 4, embed = http } }
  local ok, err = pcall(s.put, s, { "a" }, "k", { t = "x" })
  check(not ok and tostring(err):find("embed hook", 1, true), "unreachable endpoint: " .. tostring(err))
  check(sst.InMemoryStore{ index = { dims = 4, embed = "http://127.0.0.1:9/v1", model = "m" } },
        "a URL and a model")
  check(sst.InMemoryStore{ index = { dims = 4, embed = "openai:text-embedding-3-small" } } ~= nil,
        "openai:MODEL")
end)

T.case("put options, TTLs and the sweeper on InMemoryStore", function()
  local s = sst.InMemoryStore{ ttl = { default_ttl = 0.5 / 60, refresh_on_read = false } }
  s:put({ "t" }, "default", { v = 1 })
  s:put({ "t" }, "none", { v = 2 }, { ttl = false })
  s:put({ "t" }, "null", { v = 3 }, { ttl = sst.null })
  s:put({ "t" }, "long", { v = 4 }, { ttl = 1 })
  os.execute("sleep 0.7")
  eq(s:sweep_ttl(), 1, "the default TTL expired")
  local keys = {}
  for _, it in ipairs(s:search({ "t" })) do keys[#keys + 1] = it.key end
  table.sort(keys)
  eq(keys, { "long", "none", "null" }, "what is left")

  local swept = sst.InMemoryStore{ ttl = { default_ttl = 0.3 / 60, sweep_interval_minutes = 0.2 / 60 } }
  swept:put({ "t" }, "k", { v = 1 })
  os.execute("sleep 1")
  -- A busy machine may run the sweeper thread late: waited for, at most 30 s (scaled).
  local scale = math.max(1, tonumber(os.getenv("SST_TEST_TIME_SCALE") or "") or 1)
  local deadline = os.time() + 30 * scale
  while swept:get({ "t" }, "k", { refresh_ttl = false }) ~= nil and os.time() < deadline do
    os.execute("sleep 0.05")
  end
  check(swept:get({ "t" }, "k", { refresh_ttl = false }) == nil, "the sweeper deleted it")

  local omit = sst.InMemoryStore{ ttl = { default_ttl = 0.2 / 60, omit_expired = true } }
  omit:put({ "t" }, "k", { v = 1 })
  os.execute("sleep 0.4")
  check(omit:get({ "t" }, "k") == nil, "omit_expired hides it before a sweep")
  eq(omit:list_namespaces(), {}, "and its namespace")
end)

T.case("a manual clock: TTLs count the time advance_clock gives", function()
  for _, s in ipairs{ sst.InMemoryStore{ ttl = { default_ttl = 1 }, clock = "manual" },
                      sst.SqliteStore(os.tmpname(), { ttl = { default_ttl = 1 }, clock = "manual" }) } do
    s:put({ "t" }, "k", { v = 1 })
    s:put({ "t" }, "short", { v = 2 }, { ttl = 0.5 })
    s:advance_clock(29)
    eq(s:sweep_ttl(), 0, "nothing expired after 29 s")
    s:advance_clock(2)
    eq(s:sweep_ttl(), 1, "the 30 s item expired after 31 s")
    check(s:get({ "t" }, "k") ~= nil, "the 60 s item is there (and refreshed to 91 s)")
    s:advance_clock(59)
    eq(s:sweep_ttl(), 0, "refreshed: alive at 90 s")
    s:advance_clock(2)
    eq(s:sweep_ttl(), 1, "expired past its refreshed TTL")
  end
  local ok, err = pcall(sst.InMemoryStore, { clock = "fast" })
  check(not ok and tostring(err):find('clock must be "manual"', 1, true), "a bad clock: " .. tostring(err))
  local plain = sst.InMemoryStore()
  ok, err = pcall(plain.advance_clock, plain, 1)
  check(not ok and tostring(err):find("system clock", 1, true), "advance on the system clock: " .. tostring(err))
  local manual = sst.InMemoryStore{ clock = "manual" }
  ok, err = pcall(manual.advance_clock, manual, -1)
  check(not ok and tostring(err):find("expected seconds", 1, true), "a negative advance: " .. tostring(err))
end)

T.case("a SqliteStore shares the SqliteSaver's file", function()
  local path = os.tmpname()
  local saver = sst.SqliteSaver(path)
  local store = sst.SqliteStore(path)
  local g = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
  g:add_node("count", function(state, _, ctx)
    local seen = ctx.store:get({ "runs" }, "count")
    local n = (seen and seen.value.n or 0) + 1
    ctx.store:put({ "runs" }, "count", { n = n })
    return { n = 1 }
  end)
  g:add_edge(sst.START, "count")
  local app = g:compile{ checkpointer = saver, store = store }
  app:invoke({}, { configurable = { thread_id = "a" } })
  app:invoke({}, { configurable = { thread_id = "a" } })
  app:invoke({}, { configurable = { thread_id = "b" } })
  eq(store:get({ "runs" }, "count").value, { n = 3 }, "the store spans threads")
  eq(app:get_state({ configurable = { thread_id = "a" } }).values.n, 2, "the saver keeps threads")
  eq(sst.SqliteStore(path):get({ "runs" }, "count").value, { n = 3 }, "reopened")
  app, store, saver = nil, nil, nil
  collectgarbage()
  os.remove(path)
  os.remove(path .. "-wal")
  os.remove(path .. "-shm")
end)

T.case("the memory limit applies inside an embed function", function()
  local g = sst.StateGraph{ x = sst.reducers.replace }
  g:add_node("n", function() end)
  g:add_edge(sst.START, "n")
  local before = sst.memory_limit()
  g:compile{ memory_limit = 64 * MiB } -- this state's limit from now on
  local s = sst.InMemoryStore{ index = { dims = 1, embed = function(texts)
    local t = {}
    for i = 1, 1e8 do t[i] = i end -- about 1.6 GB
    return { { 1 } }
  end } }
  local ok, err = pcall(s.put, s, { "a" }, "k", { t = "x" })
  g:compile{ memory_limit = before }
  check(not ok and type(err) == "table" and err.code == "SST_ELIMIT",
        "the limit stops the embed function: " .. tostring(err))
  check(tostring(err):find("memory limit", 1, true), "says so: " .. tostring(err))
  s:put({ "a" }, "other", { no = "text" }, { index = false }) -- the store still works
end)

T.finish()
return app1
