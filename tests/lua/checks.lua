-- Assertions shared by the Lua test scripts, which load this file with
-- dofile from their own folder: check, eq and raises record a failure with
-- its traceback and go on; finish() raises them all at the end of a script.
local sst = superstep
local M = { failures = {} }

function M.check(cond, what)
  if not cond then
    M.failures[#M.failures + 1] = what .. "\n" .. debug.traceback("", 2)
  end
end

function M.eq(a, b, what)
  local ja = sst.json_encode(a)
  local jb = sst.json_encode(b)
  M.check(ja == jb, string.format("%s: expected %s, got %s", what, jb, ja))
end

function M.raises(fn, pattern, what)
  local ok, msg = pcall(fn)
  M.check(not ok, what .. ": expected an error")
  if not ok then
    M.check(tostring(msg):find(pattern, 1, true) ~= nil,
            string.format("%s: error %q does not contain %q", what, tostring(msg), pattern))
  end
end

-- Runs fn; an error it raises is recorded as a failure of @p what (so later
-- cases still run).
function M.case(what, fn)
  local ok, msg = xpcall(fn, debug.traceback)
  M.check(ok, what .. ": raised " .. tostring(msg))
end

function M.finish()
  if #M.failures > 0 then
    io.stderr:write(table.concat(M.failures, "\n"), "\n")
    error(#M.failures .. " check(s) failed:\n" .. table.concat(M.failures, "\n"))
  end
end

return M
