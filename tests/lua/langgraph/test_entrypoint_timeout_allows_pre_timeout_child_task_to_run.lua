-- langgraph: test_retry.py::test_entrypoint_timeout_allows_pre_timeout_child_task_to_run
-- script: worker states run this file again (superstep.worker), so it
--   returns its app before the checks when loaded in one.
-- An async test in Python: the child task is submitted and never awaited,
-- and runs on the executor while the entrypoint sleeps past its idle
-- timeout. Here the entrypoint has 2 workers, so the child can run on the
-- other one while the entrypoint sleeps; it runs in another Lua state, so
-- threading.Event is a file the child creates (its path reaches the child
-- as a second argument: the entrypoint's input is { value = 1, flag = path }),
-- and child_started.wait(timeout=1.0) polls for it.
-- TimeoutPolicy(idle_timeout=) is timeout = { idle_timeout = s }, a
-- NodeTimeoutError an error of kind SST_ETIMEOUT, asyncio.sleep sst.sleep.
local sst = superstep
local T = require("checks")

local child = sst.task("child", function(value, started_path)
  local f = io.open(started_path, "w") -- child_started.set()
  if f then f:write("started"); f:close() end
  return value + 1
end)

local parent = sst.entrypoint{ name = "parent", timeout = { idle_timeout = 0.05 }, workers = 2 }(function(input)
  child(input.value, input.flag)
  sst.sleep(0.2)
  return input.value
end)
if sst.worker then return parent end

local flag = os.tmpname()
os.remove(flag)

local ok, err = pcall(function() return parent:invoke({ value = 1, flag = flag }) end)
T.check(not ok, "expected NodeTimeoutError")
T.check(type(err) == "table" and err.code == "SST_ETIMEOUT",
        "expected SST_ETIMEOUT, got " .. tostring(type(err) == "table" and err.code or err))

local function exists(p)
  local f = io.open(p, "r")
  if f then f:close(); return true end
  return false
end
-- child_started.wait(timeout=1.0); the wait is only a deadline (10 s, scaled), as a
-- busy machine may start the child late.
local scale = math.max(1, tonumber(os.getenv("SST_TEST_TIME_SCALE") or "") or 1)
local started = exists(flag)
for _ = 1, 1000 * scale do
  if started then break end
  sst.sleep(0.01)
  started = exists(flag)
end
T.check(started, "the child task started")
os.remove(flag)
T.finish()
return parent
