-- langgraph: test_pregel.py::test_pending_writes_resume
-- checkpointer.get_tuple(config).pending_writes is the snapshot's
-- pending_writes ({task_id, channel, value}, the same in get_state and
-- get_state_history). Left out: the raw CheckpointTuple comparisons
-- (channel_versions, versions_seen, Python's branch:to:* channels); the saved
-- checkpoints are checked through get_state_history (count, values, metadata,
-- parent_config, pending_writes). The task error is Python's
-- 'ConnectionError("I\'m not good")'; here its text must contain the message.
-- deliberate: with durability "exit" the step-0 checkpoint of the history
-- also lists the write of "two" that the resumed run committed (superstep
-- shows what the next checkpoint committed for each task; LangGraph saved no
-- write against that checkpoint in an exit run), docs/checkpoints.md.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local PULL = "__pregel_pull"

-- Python's AwhileMaker: counts calls; returns rtn or raises it.
local function awhile_maker(rtn)
  local self = { calls = 0, rtn = rtn }
  self.fn = function()
    self.calls = self.calls + 1
    if type(self.rtn) == "string" then error(self.rtn, 0) end
    return self.rtn
  end
  return self
end

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = "[" .. durability .. "] "
  local one = awhile_maker({ value = 2 })
  local two = awhile_maker("I'm not good")
  local builder = sst.StateGraph{ value = { reducer = sst.reducers.sum, default = 0 } }
  builder:add_node("one", one.fn)
  builder:add_node("two", two.fn, { retry = { max_attempts = 2, initial_interval = 0, jitter = false } })
  builder:add_edge(sst.START, "one")
  builder:add_edge(sst.START, "two")
  local graph = builder:compile{ checkpointer = sst.MemorySaver() }

  local thread1 = lg.thread("1")
  lg.raises(function() graph:invoke({ value = 1 }, thread1, { durability = durability }) end,
            "NodeError", "I'm not good", what .. "first invoke")

  -- both nodes should have been called once
  T.eq(one.calls, 1, what .. "one calls")
  T.eq(two.calls, 2, what .. "two calls (two attempts)")

  -- latest checkpoint should be before nodes "one", "two"
  -- but we should have applied the write from "one"
  local state = graph:get_state(thread1)
  T.eq(state.values, { value = 3 }, what .. "values")
  T.eq(state.next, { "two" }, what .. "next")
  local tasks = state.tasks or {}
  T.eq(#tasks, 2, what .. "task count")
  if #tasks == 2 then
    T.check(lg.any_str(tasks[1].id) and lg.any_str(tasks[2].id), what .. "task ids")
    -- error = None and result = None are absent keys (nil) in Lua
    T.eq({ name = tasks[1].name, path = tasks[1].path, error = tasks[1].error,
           interrupts = tasks[1].interrupts, result = tasks[1].result },
         { name = "one", path = { PULL, "one" }, interrupts = sst.array{}, result = { value = 2 } },
         what .. "task one")
    T.eq({ name = tasks[2].name, path = tasks[2].path, interrupts = tasks[2].interrupts,
           result = tasks[2].result },
         { name = "two", path = { PULL, "two" }, interrupts = sst.array{} }, what .. "task two")
    T.check(type(tasks[2].error) == "string" and tasks[2].error:find("I'm not good", 1, true) ~= nil,
            what .. "task two error: " .. tostring(tasks[2].error))
  end
  T.eq(state.metadata, { parents = sst.object{}, source = "loop", step = 0 }, what .. "metadata")
  -- get_state with checkpoint_id should not apply any pending writes
  local state0 = graph:get_state(state.config)
  T.eq(state0.values, { value = 1 }, what .. "values at checkpoint")
  T.eq(state0.next, { "one", "two" }, what .. "next at checkpoint")

  -- should contain pending write of "one" and the error from "two"
  local function writes_like(got, expected, what2)
    got = got or {}
    T.eq(#got, #expected, what2 .. " count")
    local seen = {}
    for _, w in ipairs(got) do
      T.check(lg.any_str(w[1]), what2 .. ": task id")
      local ok = false
      for i, e in ipairs(expected) do
        local same
        if e[2] == lg.ANY then -- Python's 'ConnectionError("I\'m not good")'
          same = type(w[3]) == "string" and w[3]:find("I'm not good", 1, true) ~= nil
        else
          same = sst.json_encode(w[3]) == sst.json_encode(e[2])
        end
        if not seen[i] and w[2] == e[1] and same then
          seen[i], ok = true, true
          break
        end
      end
      T.check(ok, what2 .. ": unexpected write " .. sst.json_encode(w))
    end
  end
  local pw = state.pending_writes or {}
  writes_like(pw, { { "value", 2 }, { "__error__", lg.ANY } }, what .. "pending writes")
  local non_error = {}
  local error_write
  for _, w in ipairs(pw) do
    if w[2] == "__error__" then error_write = w else non_error[#non_error + 1] = w end
  end
  -- the error write is from the other task
  T.check(error_write ~= nil and non_error[1] ~= nil and error_write[1] ~= non_error[1][1],
          what .. "error write from the other task")
  T.eq(state0.pending_writes, pw, what .. "pending writes at checkpoint")

  -- resume execution
  lg.raises(function() graph:invoke(nil, thread1, { durability = durability }) end,
            "NodeError", "I'm not good", what .. "resume")
  -- node "one" succeeded previously, so shouldn't be called again
  T.eq(one.calls, 1, what .. "one calls after resume")
  -- node "two" should have been called once again
  T.eq(two.calls, 4, what .. "two calls after resume")
  -- confirm no new checkpoints saved
  T.eq(graph:get_state(thread1).metadata, state.metadata, what .. "no new checkpoint")

  -- resume execution, without exception
  two.rtn = { value = 3 }
  -- both the pending write and the new write were applied, 1 + 2 + 3 = 6
  T.eq(graph:invoke(nil, thread1, { durability = durability }), { value = 6 }, what .. "final")

  -- check all final checkpoints
  local checkpoints = graph:get_state_history(thread1)
  T.eq(#checkpoints, durability ~= "exit" and 3 or 2, what .. "checkpoint count")
  local function cfg(s) return s and s.config and s.config.configurable end
  local c1, c2, c3 = checkpoints[1] or {}, checkpoints[2] or {}, checkpoints[3]
  T.eq(cfg(c1) and { cfg(c1).thread_id, cfg(c1).checkpoint_ns }, { "1", "" }, what .. "[0] config")
  T.eq(c1.values, { value = 6 }, what .. "[0] values")
  T.eq(c1.metadata, { parents = sst.object{}, step = 1, source = "loop" }, what .. "[0] metadata")
  T.eq(c1.pending_writes, sst.array{}, what .. "[0] pending writes")
  -- the previous one holds the original error, the successful write from before
  -- and the one from resuming after preventing the error
  writes_like(c2.pending_writes, { { "value", 2 }, { "__error__", lg.ANY }, { "value", 3 } },
              what .. "[1] pending writes")
  T.eq(c1.parent_config, c2.config, what .. "[0] parent_config")
  T.eq(c2.values, { value = 1 }, what .. "[1] values")
  T.eq(c2.metadata, { parents = sst.object{}, step = 0, source = "loop" }, what .. "[1] metadata")
  if durability ~= "exit" then
    T.eq(c2.parent_config, c3 and c3.config, what .. "[1] parent_config")
    T.eq(c3 and c3.metadata, { parents = sst.object{}, step = -1, source = "input" }, what .. "[2] metadata")
    T.eq(c3 and c3.parent_config, nil, what .. "[2] parent_config")
  else
    T.eq(c2.parent_config, nil, what .. "[1] parent_config")
  end
end
T.finish()
