-- langgraph: test_large_cases.py::test_partial_pending_checkpoint
-- The FakeTracer callback checks (Python callbacks) and tool_two's
-- time.sleep(0.1) (which only orders the parallel tasks) are left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = "__pregel_pull"

local task = lg.task
local snap_eq = lg.snap_eq

local interrupts = lg.interrupts
local Interrupt = lg.Interrupt

local tool_two_node_count = 0
local function tool_two_node(s)
  tool_two_node_count = tool_two_node_count + 1
  local answer
  if s.market == "DE" then
    answer = sst.interrupt("Just because...")
  else
    answer = " all good"
  end
  return { my_key = answer }
end

local function tool_one(s) return { my_key = " one" } end

local function start(state) return { "tool_two", sst.Send("tool_one", state) } end

-- my_key: Annotated[str, operator.add] (string concatenation)
local tool_two_graph = sst.StateGraph{ my_key = function(a, b) return (a or "") .. b end,
                                       market = sst.reducers.replace }
tool_two_graph:add_node("tool_two", tool_two_node, { retry = true })
tool_two_graph:add_node("tool_one", tool_one)
tool_two_graph:set_conditional_entry_point(start)
local tool_two = tool_two_graph:compile()

local out = tool_two:invoke({ my_key = "value", market = "DE" })
out.__interrupt__ = interrupts(out.__interrupt__, "invoke DE")
T.eq(out, { my_key = "value one", market = "DE", __interrupt__ = { Interrupt("Just because...") } }, "invoke DE")
T.eq(tool_two_node_count, 1, "interrupts aren't retried")

T.eq(tool_two:invoke({ my_key = "value", market = "US" }), { my_key = "value all good one", market = "US" }, "invoke US")

tool_two = tool_two_graph:compile{ checkpointer = sst.MemorySaver() }

-- missing thread_id
lg.raises(function() tool_two:invoke({ my_key = "value", market = "DE" }) end, "ValueError", "thread_id")

-- flow: interrupt -> resume with answer
local thread2 = lg.thread("2")
-- stop when about to enter node
local chunks = lg.collect(tool_two:stream({ my_key = "value ⛰️", market = "DE" }, thread2, "updates"))
for _, c in ipairs(chunks) do
  if c.__interrupt__ then c.__interrupt__ = interrupts(c.__interrupt__, "stream 2") end
end
T.eq(chunks, { { tool_one = { my_key = " one" } }, { __interrupt__ = { Interrupt("Just because...") } } },
     "stream thread 2")
-- resume with answer
T.eq(lg.collect(tool_two:stream(sst.Command{ resume = " my answer" }, thread2, "updates")), {
  { tool_one = { my_key = " one" }, __metadata__ = { cached = true } },
  { tool_two = { my_key = " my answer" } },
}, "resume thread 2")

-- flow: interrupt -> clear tasks
local thread1 = lg.thread("1")
-- stop when about to enter node
out = tool_two:invoke({ my_key = "value ⛰️", market = "DE" }, thread1, { durability = "exit" })
out.__interrupt__ = interrupts(out.__interrupt__, "invoke thread 1")
T.eq(out, { my_key = "value ⛰️ one", market = "DE", __interrupt__ = { Interrupt("Just because...") } },
     "invoke thread 1")

local metas = {}
for i, s in ipairs(tool_two:get_state_history(thread1)) do metas[i] = s.metadata end
T.eq(metas, { { parents = sst.object{}, source = "loop", step = 0 } }, "checkpoint metadata")

local s = tool_two:get_state(thread1)
local tasks = {}
for i, t in ipairs(s.tasks or {}) do
  tasks[i] = sst.to_table(t)
  tasks[i].interrupts = interrupts(tasks[i].interrupts, "task " .. i)
end
snap_eq({ values = s.values, next = s.next, tasks = tasks, metadata = s.metadata, config = s.config,
          created_at = s.created_at, parent_config = s.parent_config,
          interrupts = interrupts(s.interrupts, "state") }, {
  values = { my_key = "value ⛰️ one", market = "DE" },
  next = { "tool_two" },
  tasks = {
    { name = "tool_one", path = { "__pregel_push", 0, false }, interrupts = sst.array{}, result = { my_key = " one" } },
    { name = "tool_two", path = { PULL, "tool_two" }, interrupts = { Interrupt("Just because...") } },
  },
  thread_id = "1",
  metadata = { parents = sst.object{}, source = "loop", step = 0 },
  parent_config = nil,
  interrupts = { Interrupt("Just because...") },
}, "state thread 1")

-- clear the interrupt and next tasks
tool_two:update_state(thread1, nil, sst.END)
-- interrupt and unresolved tasks are cleared, finished tasks are kept
snap_eq(tool_two:get_state(thread1), {
  values = { my_key = "value ⛰️ one", market = "DE" },
  next = sst.array{}, tasks = sst.array{}, thread_id = "1",
  metadata = { parents = sst.object{}, source = "update", step = 1 },
  parent_config = tool_two:get_state_history(thread1, { limit = 2 })[2].config,
}, "state after clear")
T.finish()
