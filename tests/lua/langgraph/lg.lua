-- LangGraph-shaped helpers for the ports in this folder (README.md).
local sst = superstep
local T = require("checks")
local M = {}

-- LangGraph's exception classes and the superstep error codes they map to.
M.kinds = {
  GraphRecursionError = { "SST_ELIMIT" },
  InvalidUpdateError = { "SST_ECONFLICT", "SST_EINVAL", "SST_ETYPE" },
  EmptyInputError = { "SST_EINVAL" },
  ValueError = { "SST_EINVAL", "SST_ETASK" },
  NodeError = { "SST_ETASK" },        -- an exception raised by the node itself
  GraphInterrupt = { "SST_EINTERRUPT" },
}

-- Calls fn, which must raise an error of LangGraph kind @p kind whose text
-- contains @p text (when given).
function M.raises(fn, kind, text, what)
  what = what or kind
  local ok, err = pcall(fn)
  T.check(not ok, what .. ": expected " .. kind)
  if ok then return end
  local codes = M.kinds[kind]
  T.check(codes ~= nil, what .. ": unknown kind " .. kind)
  local code = type(err) == "table" and err.code or nil
  local found = false
  for _, c in ipairs(codes or {}) do found = found or c == code end
  T.check(found, string.format("%s: expected code %s for %s, got %s (%s)", what,
          table.concat(codes or {}, "|"), kind, tostring(code), tostring(err)))
  if text then
    T.check(tostring(err):find(text, 1, true) ~= nil,
            string.format("%s: error %q lacks %q", what, tostring(err), text))
  end
  return err
end

-- The chunks of a stream as a list ({mode, chunk} pairs with several modes).
function M.collect(iter, state, init)
  local out = {}
  for a, b in iter, state, init do
    if b ~= nil then out[#out + 1] = { a, b } else out[#out + 1] = a end
  end
  return out
end

-- A config for a thread (and optionally a checkpoint).
function M.thread(id, checkpoint_id)
  return { configurable = { thread_id = id, checkpoint_id = checkpoint_id } }
end

-- True when s is a non-empty string (Python's AnyStr()).
function M.any_str(s) return type(s) == "string" and #s > 0 end

-- The values of a list of Interrupt objects, ids checked and dropped.
function M.interrupt_values(list, what)
  local out = {}
  for i, it in ipairs(list or {}) do
    T.check(M.any_str(it.id), (what or "interrupt") .. " " .. i .. ": id")
    out[i] = it.value
  end
  return out
end

-- The `next` of each snapshot of a history, newest first.
function M.nexts(history)
  local out = {}
  for i, s in ipairs(history) do out[i] = s.next end
  return out
end

-- True when list (or nil) holds x.
function M.has(list, x)
  for _, v in ipairs(list or {}) do if v == x then return true end end
  return false
end

-- Wall-clock seconds, to the nanosecond `date` gives (Python's time.time()).
function M.now()
  local p = io.popen("date +%s.%N")
  local s = p:read("l")
  p:close()
  return tonumber(s)
end

-- Order, not time, between a node and the test reading its stream (tests must not bound
-- wall time): M.flag() names a file that does not exist yet, M.signal(f) makes it, and
-- M.await(f, secs) waits for it, at most secs x SST_TEST_TIME_SCALE, and says whether
-- it came. Files, so that a node on a worker's Lua state sees them too.
function M.flag()
  local f = os.tmpname()
  os.remove(f)
  return f
end
function M.exists(f)
  local h = io.open(f, "r")
  if h then h:close() end
  return h ~= nil
end
function M.signal(f)
  local h = assert(io.open(f, "w"))
  h:close()
end
function M.await(f, secs)
  local scale = math.max(1, tonumber(os.getenv("SST_TEST_TIME_SCALE") or "") or 1)
  local deadline = os.time() + math.ceil(secs * scale) + 1
  while not M.exists(f) do
    if os.time() > deadline then return false end
    os.execute("sleep 0.01")
  end
  return true
end

-- The first snapshot of a history (newest first) whose next is { name }; with
-- @p last, the last such (the oldest).
function M.find_next(history, name, last)
  local found
  for _, s in ipairs(history) do
    if superstep.json_encode(s.next) == superstep.json_encode({ name }) then
      found = s
      if not last then break end
    end
  end
  return found
end

-- A reducer: the two lists concatenated, then sorted (the ports' sorted_add).
function M.sorted_add(x, y)
  local out = {}
  for _, v in ipairs(x or {}) do out[#out + 1] = v end
  for _, v in ipairs(y or {}) do out[#out + 1] = v end
  table.sort(out)
  return superstep.array(out)
end

-- ---- StateSnapshot comparisons (the subgraph ports) ----
-- exp may hold predicates (functions) where Python uses AnyStr()/AnyDict():
-- like() compares got with exp after replacing each matched position by "<any>".
local function norm(got, exp)
  if type(exp) == "function" then
    if exp(got) then return "<any>", "<any>" end
    return got, "<predicate>"
  end
  if type(exp) == "table" and type(got) == "table" then
    local g, e = {}, {}
    for k, v in pairs(got) do g[k] = v end
    for k, v in pairs(exp) do g[k], e[k] = norm(got[k], v) end
    setmetatable(e, getmetatable(exp)); setmetatable(g, getmetatable(got))
    return g, e
  end
  return got, exp
end
function M.like(got, exp, what)
  local g, e = norm(got, exp)
  T.eq(g, e, what)
end
M.PULL = "__pregel_pull"
-- AnyStr(), AnyStr(prefix), and a checkpoint_map / parents holding the root "" entry
M.ANY = function(v) return M.any_str(v) end
function M.prefix(p) return function(v) return type(v) == "string" and v:sub(1, #p) == p end end
M.ANY_MAP = function(v) return type(v) == "table" and M.any_str(v[""]) end

-- a StateSnapshot's fields (tasks as PregelTask fields, nested snapshots too)
function M.snap(s)
  if type(s) ~= "table" then return s end
  local tasks = {}
  for i, t in ipairs(s.tasks or {}) do
    local st = t.state
    if type(st) == "table" and st.values ~= nil then st = M.snap(st) end
    tasks[i] = { id = t.id, name = t.name, path = t.path, error = t.error, interrupts = t.interrupts,
                 state = st, result = t.result }
  end
  return { values = s.values, next = s.next, tasks = tasks, config = s.config, metadata = s.metadata,
           created_at = s.created_at, parent_config = s.parent_config, interrupts = s.interrupts }
end
-- StateSnapshot(...) with LangGraph's defaults
function M.Snapshot(t)
  t.created_at = t.created_at or M.ANY
  t.interrupts = t.interrupts or sst.array{}
  t.tasks = t.tasks or sst.array{}
  return t
end
-- PregelTask(id, name, path, ...)
function M.Task(name, path, extra)
  local t = { id = M.ANY, name = name, path = path, interrupts = sst.array{} }
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end
function M.root_config(thread_id)
  return { configurable = { thread_id = thread_id, checkpoint_ns = "", checkpoint_id = M.ANY } }
end

-- ---- StateSnapshot equality (the issue-14 ports) ----
-- got == StateSnapshot(...) of a root graph, with AnyStr() for checkpoint_id, created_at and
-- task ids; exp = {values, next, tasks, metadata, thread_id, parent_config, interrupts?}.
function M.snap_eq(got, exp, what)
  local cfg = got.config and got.config.configurable or {}
  T.check(M.any_str(cfg.checkpoint_id), what .. ": checkpoint_id")
  T.check(M.any_str(got.created_at), what .. ": created_at")
  local tasks = {}
  for i, t in ipairs(got.tasks or {}) do
    T.check(M.any_str(t.id), what .. ": task " .. i .. " id")
    tasks[i] = { name = t.name, path = t.path, error = t.error, interrupts = t.interrupts,
                 state = t.state, result = t.result }
  end
  T.eq({ values = got.values, next = got.next, tasks = tasks, metadata = got.metadata,
         config = got.config, parent_config = got.parent_config, interrupts = got.interrupts },
       { values = exp.values, next = exp.next, tasks = exp.tasks, metadata = exp.metadata,
         config = { configurable = { thread_id = exp.thread_id, checkpoint_ns = "",
                                     checkpoint_id = cfg.checkpoint_id } },
         parent_config = exp.parent_config, interrupts = exp.interrupts or sst.array{} }, what)
end
-- PregelTask(AnyStr(), name, (PULL, name), result=result), the id checked by snap_eq
function M.task(name, result)
  return { name = name, path = { M.PULL, name }, interrupts = sst.array{}, result = result }
end
-- A list of Interrupt(value=..., id=AnyStr()): ids checked, each kept as {value, id = true}
function M.interrupts(list, what)
  local out = {}
  for i, it in ipairs(list or {}) do
    T.check(M.any_str(it.id), what .. ": interrupt " .. i .. " id")
    out[i] = { value = it.value, id = true }
  end
  return out
end
-- Interrupt(value, id=AnyStr()) as M.interrupts keeps it
function M.Interrupt(value) return { value = value, id = true } end

-- get_graph():to_json() with each node's data.id (superstep's class, e.g. {"superstep",
-- "Node"}) replaced by the LangGraph class Python names there (deliberate: docs/subgraphs.md).
local PY_CLASS = {
  Node = { "langgraph", "_internal", "_runnable", "RunnableCallable" },
  CompiledGraph = { "langgraph", "graph", "state", "CompiledStateGraph" },
}
function M.python_graph(g)
  for _, n in ipairs(g.nodes) do
    if n.data then
      T.eq(n.data.id[1], "superstep", "node " .. n.id .. ": data.id")
      n.data.id = PY_CLASS[n.data.id[2]] or n.data.id
    end
  end
  return g
end

return M
