-- langgraph: test_pregel_async.py::test_handles_multiple_interrupts_from_tasks
-- An async test with no sync twin; `await add_participant(...)` is
-- add_participant(...):result(). Python's `feedback is False` / `is True`
-- are comparisons with false / true; ValueError is a Lua error.
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

local function only_interrupt(result, value, what)
  local keys = {}
  for k in pairs(result or {}) do keys[#keys + 1] = k end
  T.eq(keys, { "__interrupt__" }, what .. ": returns only the interrupt")
  T.eq(lg.interrupts(result and result.__interrupt__, what), { lg.Interrupt(value) }, what)
end

local function task_interrupts(what)
  local state = program:get_state(config)
  local tasks = state.tasks or {}
  local its = tasks[1] and tasks[1].interrupts or {}
  T.eq(#its, 1, what .. ": the task has one interrupt")
  return its[1] and its[1].value
end

local result = program:invoke("this is ignored", config)
only_interrupt(result, "Hey do you want to add James?", "first run")

T.eq(task_interrupts("after the first run"), "Hey do you want to add James?", "first task interrupt")

result = program:invoke(sst.Command{ resume = true }, config)
only_interrupt(result, "Hey do you want to add Will?", "first resume")

T.eq(task_interrupts("after the first resume"), "Hey do you want to add Will?", "second task interrupt")

result = program:invoke(sst.Command{ resume = true }, config)
T.check(result ~= nil, "result is not None")
T.eq(#(result or {}), 2, "two results")
T.eq(result and result[1], "Added James!", "first result")
T.eq(result and result[2], "Added Will!", "second result")
T.finish()
