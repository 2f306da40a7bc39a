-- langgraph: test_pregel.py::test_nested_graph_interrupts_parallel
-- deliberate: the subgraph's own updates stream as its supersteps commit, while
--   the parent's sibling outer_1 streams at the parent's commit, in task order
--   (DESIGN.md semantic 3), so inner_1 comes first; LangGraph streams each task's
--   update as it finishes (outer_1 first: inner_1 sleeps 0.1 s).
-- The durability parameter is a loop (a fresh MemorySaver each time).
-- time.sleep(0.1) is os.execute("sleep 0.1"). The namespace AnyStr("inner:")
-- is a string starting with "inner:"; `__metadata__` is the chunk key
-- LangGraph adds for a write replayed from the checkpoint.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function concat() return { reducer = function(a, b) return a .. b end, default = "" } end

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = durability .. ": "
  local opts = { durability = durability }
  local inner = sst.StateGraph{ my_key = concat(), my_other_key = sst.reducers.replace }
  inner:add_node("inner_1", function(state)
    os.execute("sleep 0.1")
    return { my_key = "got here", my_other_key = state.my_key }
  end)
  inner:add_node("inner_2", function(state) return { my_key = " and there", my_other_key = state.my_key } end)
  inner:add_edge("inner_1", "inner_2")
  inner:set_entry_point("inner_1")
  inner:set_finish_point("inner_2")

  local graph = sst.StateGraph{ my_key = concat() }
  graph:add_node("inner", inner:compile{ interrupt_before = { "inner_2" } })
  graph:add_node("outer_1", function() return { my_key = " and parallel" } end)
  graph:add_node("outer_2", function() return { my_key = " and back again" } end)
  graph:add_edge(sst.START, "inner")
  graph:add_edge(sst.START, "outer_1")
  graph:add_edge({ "inner", "outer_1" }, "outer_2")
  graph:set_finish_point("outer_2")
  local saver = sst.MemorySaver()
  local app = graph:compile{ checkpointer = saver }

  -- invoke w/ nested interrupt
  local config = lg.thread("1")
  T.eq(app:invoke({ my_key = "" }, config, opts), { my_key = " and parallel" }, what .. "invoke 1")
  T.eq(app:invoke(nil, config, opts), { my_key = "got here and there and parallel and back again" },
       what .. "invoke 2")

  -- stream updates w/ nested interrupt
  config = lg.thread("2")
  local chunks = lg.collect(app:stream({ my_key = "" }, config, "updates", { subgraphs = true, durability = durability }))
  T.eq(#chunks, 3, what .. "stream 1 length")
  T.check(chunks[1] and #chunks[1][1] == 1 and chunks[1][1][1]:sub(1, 6) == "inner:", what .. "stream 1 chunk 1 ns")
  T.eq(chunks[1] and chunks[1][2], { inner_1 = { my_key = "got here", my_other_key = "" } }, what .. "stream 1 chunk 1")
  T.eq(chunks[2], { sst.array{}, { outer_1 = { my_key = " and parallel" } } }, what .. "stream 1 chunk 2")
  T.eq(chunks[3], { sst.array{}, { __interrupt__ = sst.array{} } }, what .. "stream 1 chunk 3")
  T.eq(lg.collect(app:stream(nil, config, "updates", opts)), {
    { outer_1 = { my_key = " and parallel" }, __metadata__ = { cached = true } },
    { inner = { my_key = "got here and there" } },
    { outer_2 = { my_key = " and back again" } },
  }, what .. "stream 2")

  -- stream values w/ nested interrupt
  config = lg.thread("3")
  T.eq(lg.collect(app:stream({ my_key = "" }, config, "values", opts)),
       { { my_key = "" }, { my_key = " and parallel" } }, what .. "values 1")
  T.eq(lg.collect(app:stream(nil, config, "values", opts)), {
    { my_key = "" },
    { my_key = "got here and there and parallel" },
    { my_key = "got here and there and parallel and back again" },
  }, what .. "values 2")

  -- interrupts BEFORE the parallel node
  app = graph:compile{ checkpointer = saver, interrupt_before = { "outer_1" } }
  config = lg.thread("4")
  T.eq(lg.collect(app:stream({ my_key = "" }, config, "values", opts)), { { my_key = "" } }, what .. "before 1")
  T.eq(lg.collect(app:stream(nil, config, "values", opts)),
       { { my_key = "" }, { my_key = " and parallel" } }, what .. "before 2")
  T.eq(lg.collect(app:stream(nil, config, "values", opts)), {
    { my_key = "" },
    { my_key = "got here and there and parallel" },
    { my_key = "got here and there and parallel and back again" },
  }, what .. "before 3")

  -- interrupts AFTER the parallel node
  app = graph:compile{ checkpointer = saver, interrupt_after = { "outer_1" } }
  config = lg.thread("5")
  T.eq(lg.collect(app:stream({ my_key = "" }, config, "values", opts)),
       { { my_key = "" }, { my_key = " and parallel" } }, what .. "after 1")
  T.eq(lg.collect(app:stream(nil, config, "values", opts)),
       { { my_key = "" }, { my_key = "got here and there and parallel" } }, what .. "after 2")
  T.eq(lg.collect(app:stream(nil, config, "values", opts)), {
    { my_key = "got here and there and parallel" },
    { my_key = "got here and there and parallel and back again" },
  }, what .. "after 3")
end
T.finish()
