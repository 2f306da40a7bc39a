-- langgraph: test_pregel.py::test_stream_subgraphs_during_execution
-- deliberate: a superstep's updates stream when it commits, in task order
--   (DESIGN.md semantic 3: the same stream with 1 worker or 16), while a
--   subgraph's own updates stream as the child's supersteps commit; so both of
--   inner's child updates come first, then the parent's superstep 1 in task
--   order (inner, outer_1), then outer_2. LangGraph streams each task's update
--   the moment it finishes, so its order follows the sleeps: inner_1,
--   outer_1 (0.2 s), inner_2 (0.5 s), inner, outer_2 (docs/subgraphs.md,
--   "Order of updates"). This port asserts superstep's order, namespaces and
--   values exactly; the Python test's wall-clock ranges are left out.
-- time.sleep is os.execute("sleep N"), kept so that outer_1 finishes before
-- inner_2 as in Python: the order must not follow it. The namespace
-- AnyStr("inner:") is "inner:" and the subgraph task's id.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function concat() return { reducer = function(a, b) return a .. b end, default = "" } end

local inner = sst.StateGraph{ my_key = concat(), my_other_key = sst.reducers.replace }
inner:add_node("inner_1", function(state) return { my_key = "got here", my_other_key = state.my_key } end)
inner:add_node("inner_2", function(state)
  os.execute("sleep 0.5")
  return { my_key = " and there", my_other_key = state.my_key }
end)
inner:add_edge("inner_1", "inner_2")
inner:set_entry_point("inner_1")
inner:set_finish_point("inner_2")

local graph = sst.StateGraph{ my_key = concat() }
graph:add_node("inner", inner:compile())
graph:add_node("outer_1", function()
  os.execute("sleep 0.2")
  return { my_key = " and parallel" }
end)
graph:add_node("outer_2", function() return { my_key = " and back again" } end)
graph:add_edge(sst.START, "inner")
graph:add_edge(sst.START, "outer_1")
graph:add_edge({ "inner", "outer_1" }, "outer_2")
graph:add_edge("outer_2", sst.END)
local app = graph:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("2")
local chunks = lg.collect(app:stream({ my_key = "" }, config, "updates", { subgraphs = true }))

-- The subgraph task's namespace: "inner:" and the id of the parent's task that ran it.
local inner_task
for _, t in ipairs(app:get_state_history(config)) do
  for _, task in ipairs(t.tasks) do
    if task.name == "inner" then inner_task = task.id end
  end
end
T.check(type(inner_task) == "string" and #inner_task > 0, "the inner task's id in the history")
local inner_ns = { "inner:" .. tostring(inner_task) }

T.eq(chunks, {
  { inner_ns, { inner_1 = { my_key = "got here", my_other_key = "" } } },
  { inner_ns, { inner_2 = { my_key = " and there", my_other_key = "got here" } } },
  { sst.array{}, { inner = { my_key = "got here and there" } } },
  { sst.array{}, { outer_1 = { my_key = " and parallel" } } },
  { sst.array{}, { outer_2 = { my_key = " and back again" } } },
}, "updates with subgraphs, in superstep order")
T.eq(app:get_state(config).values, { my_key = "got here and there and parallel and back again" },
     "final state")
T.finish()
