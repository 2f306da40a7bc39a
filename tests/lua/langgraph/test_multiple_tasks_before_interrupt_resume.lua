-- langgraph: test_pregel.py::test_multiple_tasks_before_interrupt_resume
-- The tasks are defined inside the entrypoint (closures), as in Python.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local workflow = sst.entrypoint{ name = "workflow", checkpointer = sst.MemorySaver() }(function(inputs)
  local step_a = sst.task("step_a", function(x) return x + 1 end)
  local step_b = sst.task("step_b", function(x) return x * 2 end)
  local ask = sst.task("ask", function(question) return sst.interrupt(question) end)

  local a = step_a(inputs.x):result()
  local b = step_b(a):result()

  local answer = ask("Result so far is " .. b .. ". What next?"):result()

  return { computed = b, answer = answer }
end)

local config = lg.thread("1")

-- First invocation - should get interrupt
local result = workflow:invoke({ x = 5 }, config)
T.check(type(result) == "table" and result.__interrupt__ ~= nil, "interrupted")
T.eq(result and result.__interrupt__ and result.__interrupt__[1] and result.__interrupt__[1].value,
     "Result so far is 12. What next?", "interrupt value")

-- Resume
result = workflow:invoke(sst.Command{ resume = "continue" }, config)
T.eq(result, { computed = 12, answer = "continue" }, "result")
T.finish()
