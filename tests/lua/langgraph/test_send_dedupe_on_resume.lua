-- langgraph: test_large_cases.py::test_send_dedupe_on_resume
-- deliberate: a Command goto replaces the node's edges (DESIGN.md semantic
--   5; LangGraph adds them), so node 2's Command names "3", its edge target,
--   beside the Send, to run 3 as LangGraph does.
-- StateGraph(Annotated[list, operator.add]) is a root state; here it is the
-- one field `value` (the README maps only dict-shaped states, as in
-- test_multiple_updates_root.lua): a root value `[...]` is { value = {...} }
-- and a node's update `[x]` is { value = { x } }. The Send payload
-- is the node's `input`; Python's str(Command(goto=Send(...))) is rebuilt from
-- the payload's goto Send (fields node and arg, as in Python), and
-- replace(command, update=...) is a Command with the same goto. The
-- durability parametrization is a loop (a fresh graph and saver each).
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL, PUSH = "__pregel_pull", "__pregel_push"

local COMMAND = getmetatable(sst.Command{})

local function repr(cmd)
  local s = cmd["goto"]
  return string.format("Command(goto=Send(node='%s', arg=%s))", tostring(s.node), tostring(s.arg))
end

local function strip_interrupts(list, what)
  local out = {}
  for i, it in ipairs(list or {}) do
    T.check(lg.any_str(it.id), what .. ": interrupt " .. i .. " id")
    out[i] = { value = it.value, id = true }
  end
  return out
end

-- got == StateSnapshot(...), with AnyStr() for ids and created_at.
local function snap_eq(got, exp, what)
  local cfg = got.config and got.config.configurable or {}
  T.check(lg.any_str(cfg.checkpoint_id), what .. ": checkpoint_id")
  T.check(lg.any_str(got.created_at), what .. ": created_at")
  local pcfg = got.parent_config and got.parent_config.configurable or {}
  local tasks = {}
  for i, t in ipairs(got.tasks or {}) do
    T.check(lg.any_str(t.id), what .. ": task " .. i .. " id")
    tasks[i] = { name = t.name, path = t.path, error = t.error, interrupts = strip_interrupts(t.interrupts, what),
                 state = t.state, result = t.result }
  end
  local exp_parent = exp.parent_config
  if exp_parent == true then
    T.check(lg.any_str(pcfg.checkpoint_id), what .. ": parent checkpoint_id")
    exp_parent = { configurable = { thread_id = "1", checkpoint_ns = "", checkpoint_id = pcfg.checkpoint_id } }
  end
  T.eq({ values = got.values, next = got.next, tasks = tasks, metadata = got.metadata,
         config = got.config, parent_config = got.parent_config,
         interrupts = strip_interrupts(got.interrupts, what) },
       { values = exp.values, next = exp.next, tasks = exp.tasks, metadata = exp.metadata,
         config = { configurable = { thread_id = "1", checkpoint_ns = "", checkpoint_id = cfg.checkpoint_id } },
         parent_config = exp_parent, interrupts = exp.interrupts or sst.array{} }, what)
end

local function task(name, path, result, interrupts)
  return { name = name, path = path, interrupts = interrupts or sst.array{}, result = result }
end
local BAHH = { { value = "Bahh", id = true } }

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = "durability " .. durability
  local ticks = {}

  local function InterruptOnce(name)
    ticks[name] = 0
    return name, function(state, input)
      ticks[name] = ticks[name] + 1
      if ticks[name] == 1 then sst.interrupt("Bahh") end
      return { value = { "flaky|" .. tostring(input) } }
    end
  end

  local function Node(name)
    ticks[name] = 0
    return name, function(state, input)
      ticks[name] = ticks[name] + 1
      if input == nil then return { value = { name } } end
      local is_command = getmetatable(input) == COMMAND
      local update = { value = { name .. "|" .. (is_command and repr(input) or tostring(input)) } }
      if is_command then
        -- superstep's goto replaces node 2's edge to 3 (deliberate): name 3 too
        local go = name == "2" and { input["goto"], "3" } or input["goto"]
        return sst.Command{ update = update, ["goto"] = go }
      end
      return update
    end
  end

  local function send_for_fun()
    return {
      sst.Send("2", sst.Command{ ["goto"] = sst.Send("2", 3) }),
      sst.Send("2", sst.Command{ ["goto"] = sst.Send("flaky", 4) }),
      "3.1",
    }
  end

  local builder = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
  builder:add_node(Node("1"))
  builder:add_node(Node("2"))
  builder:add_node(Node("3"))
  builder:add_node(Node("3.1"))
  builder:add_node(InterruptOnce("flaky"))
  builder:add_edge(sst.START, "1")
  builder:add_conditional_edges("1", send_for_fun)
  -- route_to_three -> Literal["3"]: the path map is the Literal
  builder:add_conditional_edges("2", function() return "3" end, { "3" })

  local graph = builder:compile{ checkpointer = sst.MemorySaver() }
  local thread1 = lg.thread("1")
  -- Python's root output is only {__interrupt__}; the field `value` it does not show is not compared
  local out = graph:invoke({ value = { "0" } }, thread1, { durability = durability })
  T.eq({ __interrupt__ = strip_interrupts(out.__interrupt__, what) }, { __interrupt__ = BAHH }, what .. ": invoke")
  T.eq(ticks["2"], 3, what .. ": ticks 2")
  T.eq(ticks.flaky, 1, what .. ": ticks flaky")
  -- check state
  T.eq(graph:get_state(thread1).next, { "flaky" }, what .. ": next")
  -- check history
  T.eq(#graph:get_state_history(thread1), durability ~= "exit" and 4 or 1, what .. ": history length")

  -- resume execution
  local final = {
    "0", "1", "3.1",
    "2|Command(goto=Send(node='2', arg=3))",
    "2|Command(goto=Send(node='flaky', arg=4))",
    "3", "2|3", "flaky|4", "3",
  }
  T.eq(graph:invoke(nil, thread1, { durability = durability }), { value = final }, what .. ": resume")
  -- node "2" doesn't get called again, as we recover writes saved before
  T.eq(ticks["2"], 3, what .. ": ticks 2 after resume")
  -- node "flaky" gets called again, as it was interrupted
  T.eq(ticks.flaky, 2, what .. ": ticks flaky after resume")
  -- check state
  T.eq(graph:get_state(thread1).next, sst.array{}, what .. ": next after resume")
  -- check history
  local history = graph:get_state_history(thread1)
  T.eq(#history, durability ~= "exit" and 6 or 2, what .. ": history length after resume")

  local expected_history = {
    { values = { value = final }, next = sst.array{}, metadata = { source = "loop", step = 4, parents = sst.object{} },
      parent_config = true, tasks = sst.array{} },
    { values = { value = { table.unpack(final, 1, 8) } }, next = { "3" },
      metadata = { source = "loop", step = 3, parents = sst.object{} }, parent_config = true,
      tasks = { task("3", { PULL, "3" }, { value = { "3" } }) } },
    { values = { value = { table.unpack(final, 1, 5) } }, next = { "2", "flaky", "3" },
      metadata = { source = "loop", step = 2, parents = sst.object{} }, parent_config = true,
      tasks = {
        task("2", { PUSH, 0, false }, { value = { "2|3" } }),
        task("flaky", { PUSH, 1, false }, durability ~= "exit" and { value = { "flaky|4" } } or nil, BAHH),
        task("3", { PULL, "3" }, { value = { "3" } }),
      },
      interrupts = BAHH },
    { values = { value = { "0", "1" } }, next = { "2", "2", "3.1" },
      metadata = { source = "loop", step = 1, parents = sst.object{} }, parent_config = true,
      tasks = {
        task("2", { PUSH, 0, false }, { value = { "2|Command(goto=Send(node='2', arg=3))" } }),
        task("2", { PUSH, 1, false }, { value = { "2|Command(goto=Send(node='flaky', arg=4))" } }),
        task("3.1", { PULL, "3.1" }, { value = { "3.1" } }),
      } },
    { values = { value = { "0" } }, next = { "1" }, metadata = { source = "loop", step = 0, parents = sst.object{} },
      parent_config = true, tasks = { task("1", { PULL, "1" }, { value = { "1" } }) } },
    { values = { value = sst.array{} }, next = { "__start__" }, metadata = { source = "input", step = -1, parents = sst.object{} },
      parent_config = nil, tasks = { task("__start__", { PULL, "__start__" }, { value = { "0" } }) } },
  }
  if durability ~= "exit" then
    for i, exp in ipairs(expected_history) do
      if history[i] then snap_eq(history[i], exp, what .. ": history " .. i) end
    end
  else
    if history[1] and history[2] then
      local exp1 = expected_history[1]
      exp1.parent_config = history[2].config
      snap_eq(history[1], exp1, what .. ": history 1")
      local exp2 = expected_history[3]
      exp2.parent_config = nil
      snap_eq(history[2], exp2, what .. ": history 2")
    end
  end
end
T.finish()
