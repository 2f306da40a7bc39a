-- langgraph: test_large_cases.py::test_fork_always_re_runs_nodes
-- Python's state is a bare int (StateGraph(Annotated[int, operator.add]));
-- superstep states are objects, so the int is the field `value` (summed) and
-- the values/updates chunks and snapshot values hold { value = n }.
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = "__pregel_pull"

local task = lg.task
local snap_eq = lg.snap_eq

local builder = sst.StateGraph{ value = { reducer = sst.reducers.sum, default = 0 } }
builder:add_node("add_one", function() return { value = 1 } end)
builder:add_edge(sst.START, "add_one")
builder:add_conditional_edges("add_one", function(s) if s.value < 6 then return "add_one" end return sst.END end)
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local thread1 = lg.thread("1")

-- start execution, stop at inbox
T.eq(lg.collect(graph:stream({ value = 1 }, { configurable = thread1.configurable, durability = "async" },
                             { "values", "updates" })), {
  { "values", { value = 1 } },
  { "updates", { add_one = { value = 1 } } },
  { "values", { value = 2 } },
  { "updates", { add_one = { value = 1 } } },
  { "values", { value = 3 } },
  { "updates", { add_one = { value = 1 } } },
  { "values", { value = 4 } },
  { "updates", { add_one = { value = 1 } } },
  { "values", { value = 5 } },
  { "updates", { add_one = { value = 1 } } },
  { "values", { value = 6 } },
}, "stream")

-- list history
local history = graph:get_state_history(thread1)
T.eq(#history, 7, "history length")
local function meta(source, step) return { parents = sst.object{}, source = source, step = step } end
local function parent(i) return history[i] and history[i].config end
snap_eq(history[1], { values = { value = 6 }, tasks = sst.array{}, next = sst.array{}, thread_id = "1",
                      metadata = meta("loop", 5), parent_config = parent(2) }, "history 1")
for i = 2, 6 do
  snap_eq(history[i], { values = { value = 7 - i }, tasks = { task("add_one", { value = 1 }) }, next = { "add_one" },
                        thread_id = "1", metadata = meta("loop", 6 - i), parent_config = parent(i + 1) },
          "history " .. i)
end
snap_eq(history[7], { values = { value = 0 }, tasks = { task("__start__", { value = 1 }) }, next = { "__start__" },
                      thread_id = "1", metadata = meta("input", -1), parent_config = nil }, "history 7")

-- forking from any previous checkpoint should re-run nodes
T.eq(lg.collect(graph:stream(nil, history[1].config, "updates")), sst.array{}, "fork 1")
T.eq(lg.collect(graph:stream(nil, history[2].config, "updates")), { { add_one = { value = 1 } } }, "fork 2")
T.eq(lg.collect(graph:stream(nil, history[3].config, "updates")),
     { { add_one = { value = 1 } }, { add_one = { value = 1 } } }, "fork 3")
T.finish()
