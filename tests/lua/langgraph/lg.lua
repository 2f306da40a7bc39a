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

return M
