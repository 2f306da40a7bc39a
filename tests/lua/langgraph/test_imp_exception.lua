-- langgraph: test_pregel.py::test_imp_exception
-- time.sleep is sst.sleep; Python's try/except around the failing task's
-- result() is a pcall.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local my_task = sst.task(function(number)
  sst.sleep(0.1)
  return number * 2
end)

local task_with_exception = sst.task(function(number)
  sst.sleep(0.1)
  error("This is a test exception")
end)

local my_workflow = sst.entrypoint{ checkpointer = sst.MemorySaver() }(function(number)
  my_task(number):result()
  pcall(function() return task_with_exception(number):result() end) -- the exception is caught
  my_task(number):result()
  return "done"
end)

local thread1 = lg.thread("1")
T.eq(my_workflow:invoke(1, thread1), "done", "invoke")

T.eq(lg.collect(my_workflow:stream(1, thread1)), {
  { my_task = 2 },
  { my_task = 2 },
  { my_workflow = "done" },
}, "stream")
T.finish()
