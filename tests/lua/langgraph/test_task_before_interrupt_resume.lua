-- langgraph: test_pregel.py::test_task_before_interrupt_resume
-- The tasks are defined inside the entrypoint (closures), as in Python.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local workflow = sst.entrypoint{ name = "workflow", checkpointer = sst.MemorySaver() }(
  function(number_of_topics)
    local setup = sst.task("setup", function()
      return number_of_topics
    end)
    local ask = sst.task("ask", function(question)
      return sst.interrupt(question)
    end)

    local n = setup():result()

    local answers = {}
    for i = 1, n do
      local q = "Whats the answer for topic " .. i .. "?"
      answers[#answers + 1] = ask(q):result()
    end
    return { answers = answers }
  end)

local config = lg.thread("1")

-- First invocation - should get first interrupt
local result = workflow:invoke(2, config)
T.check(type(result) == "table" and result.__interrupt__ ~= nil, "first invoke interrupted")
T.eq(#((result or {}).__interrupt__ or {}), 1, "one interrupt")
T.eq(lg.interrupt_values((result or {}).__interrupt__), { "Whats the answer for topic 1?" }, "first interrupt")

-- Resume with answer for topic 1 - should get second interrupt
result = workflow:invoke(sst.Command{ resume = "answer1" }, config)
T.check(type(result) == "table" and result.__interrupt__ ~= nil,
        "Expected interrupt for topic 2, got: " .. sst.json_encode(result))
T.eq(#((result or {}).__interrupt__ or {}), 1, "one interrupt after the first resume")
T.eq(lg.interrupt_values((result or {}).__interrupt__), { "Whats the answer for topic 2?" }, "second interrupt")

-- Resume with answer for topic 2 - should get final result
result = workflow:invoke(sst.Command{ resume = "answer2" }, config)
T.eq(result, { answers = { "answer1", "answer2" } }, "result")
T.finish()
