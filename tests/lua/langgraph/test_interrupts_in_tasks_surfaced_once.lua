-- langgraph: test_pregel_async.py::test_interrupts_in_tasks_surfaced_once
-- An async test with no sync twin; `await add_participant(...)` is
-- add_participant(...):result(), astream is stream. Python's `feedback is
-- False` / `is True` are comparisons with false / true; ValueError is a
-- Lua error.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local add_participant = sst.task("add_participant", function(name)
  local feedback = sst.interrupt("Hey do you want to add " .. name .. "?")

  if feedback == false then
    return "The user changed their mind and doesn't want to add " .. name .. "!"
  end

  if feedback == true then
    return "Added " .. name .. "!"
  end

  error("Invalid feedback")
end)

local program = sst.entrypoint{ name = "program", checkpointer = sst.MemorySaver() }(function(_state)
  local first = add_participant("James"):result()
  local second = add_participant("Will"):result()
  return { first, second }
end)

local config = lg.thread("1")

local function count_interrupts(input)
  local n = 0
  for e in program:stream(input, config) do
    if type(e) == "table" and e.__interrupt__ ~= nil then n = n + 1 end
  end
  return n
end

local function task_interrupts(what)
  local state = program:get_state(config)
  local tasks = state.tasks or {}
  local its = tasks[1] and tasks[1].interrupts or {}
  T.eq(#its, 1, what .. ": the task has one interrupt")
  return its[1] and its[1].value
end

T.eq(count_interrupts("this is ignored"), 1, "interrupts streamed by the first run")
T.eq(task_interrupts("after the first run"), "Hey do you want to add James?", "first task interrupt")

T.eq(count_interrupts(sst.Command{ resume = true }), 1, "interrupts streamed by the first resume")
T.eq(task_interrupts("after the first resume"), "Hey do you want to add Will?", "second task interrupt")

local result = program:invoke(sst.Command{ resume = true }, config)
T.check(result ~= nil, "result is not None")
T.eq(#(result or {}), 2, "two results")
T.eq(result and result[1], "Added James!", "first result")
T.eq(result and result[2], "Added Will!", "second result")
T.finish()
