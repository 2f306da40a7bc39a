-- langgraph: test_pregel.py::test_no_redundant_put_writes_for_cached_task
-- Left out: the count of PregelLoop.put_writes calls during the resume
-- (Python patches the method with a spy; superstep's loop has no such
-- hook in Lua). The invokes and their results are kept.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local setup = sst.task("setup", function(x) return x end)
local ask = sst.task("ask", function(question) return sst.interrupt(question) end)

local workflow = sst.entrypoint{ name = "workflow", checkpointer = sst.MemorySaver() }(function(x)
  local n = setup(x):result()
  local answer = ask("q" .. n):result()
  return { answer = answer }
end)

local config = lg.thread("1")
local result = workflow:invoke(1, config)
T.check(type(result) == "table" and result.__interrupt__ ~= nil, "interrupted")

result = workflow:invoke(sst.Command{ resume = "ans" }, config)
T.eq(result, { answer = "ans" }, "result")
T.finish()
