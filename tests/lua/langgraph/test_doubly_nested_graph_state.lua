-- langgraph: test_large_cases.py::test_doubly_nested_graph_state
-- AnyStr()/AnyStr(prefix)/AnyDict() are the predicates ANY, prefix(...) and
-- ANY_MAP (a checkpoint_map holding the root "" entry) compared by like().
-- get_state(config, subgraphs=True) is get_state(config, { subgraphs = true });
-- stream(..., subgraphs=True) is stream(x, config, "updates", { subgraphs = true,
-- ... }), yielding `namespace, chunk` (the namespace as a list).
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = lg.PULL

local like, ANY, prefix, ANY_MAP = lg.like, lg.ANY, lg.prefix, lg.ANY_MAP
local snap, Snapshot, Task, root_config = lg.snap, lg.Snapshot, lg.Task, lg.root_config
local ANY_PARENTS = ANY_MAP -- metadata parents holding the root "" entry

local grandchild = sst.StateGraph{ my_key = sst.reducers.replace }
grandchild:add_node("grandchild_1", function(state) return { my_key = state.my_key .. " here" } end)
grandchild:add_node("grandchild_2", function(state) return { my_key = state.my_key .. " and there" } end)
grandchild:add_edge("grandchild_1", "grandchild_2")
grandchild:set_entry_point("grandchild_1")
grandchild:set_finish_point("grandchild_2")

local child = sst.StateGraph{ my_key = sst.reducers.replace }
child:add_node("child_1", grandchild:compile{ interrupt_before = { "grandchild_2" } })
child:set_entry_point("child_1")
child:set_finish_point("child_1")

local graph = sst.StateGraph{ my_key = sst.reducers.replace }
graph:add_node("parent_1", function(state) return { my_key = "hi " .. state.my_key } end)
graph:add_node("child", child:compile())
graph:add_node("parent_2", function(state) return { my_key = state.my_key .. " and back again" } end)
graph:set_entry_point("parent_1")
graph:add_edge("parent_1", "child")
graph:add_edge("child", "parent_2")
graph:set_finish_point("parent_2")

local app = graph:compile{ checkpointer = sst.MemorySaver() }
local opts = { subgraphs = true, durability = "exit" }

-- test invoke w/ nested interrupt
local config = lg.thread("1")
like(lg.collect(app:stream({ my_key = "my value" }, config, "updates", opts)), {
  { sst.array{}, { parent_1 = { my_key = "hi my value" } } },
  { { prefix("child:"), prefix("child_1:") }, { grandchild_1 = { my_key = "hi my value here" } } },
  { sst.array{}, { __interrupt__ = sst.array{} } },
}, "stream 1")
-- get state without subgraphs
local outer_state = app:get_state(config)
like(snap(outer_state), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child", { PULL, "child" }, { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("child") } } }) },
  next = { "child" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "outer state")
local child_state_expected = Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child_1", { PULL, "child_1" }, { state = { configurable = { thread_id = "1", checkpoint_ns = ANY } } }) },
  next = { "child_1" },
  config = { configurable = { thread_id = "1", checkpoint_ns = prefix("child:"), checkpoint_id = ANY,
                              checkpoint_map = ANY_MAP } },
  metadata = { parents = { [""] = ANY }, source = "loop", step = 0 },
  parent_config = nil,
}
local child_state = app:get_state(outer_state.tasks[1].state)
like(snap(child_state), child_state_expected, "child state")
local grandchild_expected = Snapshot{
  values = { my_key = "hi my value here" },
  tasks = { Task("grandchild_2", { PULL, "grandchild_2" }) },
  next = { "grandchild_2" },
  config = { configurable = { thread_id = "1", checkpoint_ns = ANY, checkpoint_id = ANY, checkpoint_map = ANY_MAP } },
  metadata = { parents = ANY_PARENTS, source = "loop", step = 1 },
  parent_config = nil,
}
like(snap(app:get_state(child_state.tasks[1].state)), grandchild_expected, "grandchild state")
-- get state with subgraphs
local nested_child = Snapshot{
  values = child_state_expected.values,
  tasks = { Task("child_1", { PULL, "child_1" }, { state = grandchild_expected }) },
  next = child_state_expected.next,
  config = child_state_expected.config,
  metadata = child_state_expected.metadata,
  parent_config = nil,
}
like(snap(app:get_state(config, { subgraphs = true })), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child", { PULL, "child" }, { state = nested_child }) },
  next = { "child" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "state with subgraphs")
-- # resume
like(lg.collect(app:stream(nil, config, "updates", opts)), {
  { { prefix("child:"), prefix("child_1:") }, { grandchild_2 = { my_key = "hi my value here and there" } } },
  { { prefix("child:") }, { child_1 = { my_key = "hi my value here and there" } } },
  { sst.array{}, { child = { my_key = "hi my value here and there" } } },
  { sst.array{}, { parent_2 = { my_key = "hi my value here and there and back again" } } },
}, "stream 2")
-- get state with and without subgraphs
local final = Snapshot{
  values = { my_key = "hi my value here and there and back again" },
  next = sst.array{},
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 3 },
  parent_config = root_config("1"),
}
like(snap(app:get_state(config)), final, "final state")
like(snap(app:get_state(config, { subgraphs = true })), final, "final state with subgraphs")

-- get outer graph history
local outer_history = app:get_state_history(config)
T.eq(#outer_history, 2, "outer history length")
like(snap(outer_history[1]), final, "outer history 1")
like(snap(outer_history[2]), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child", { PULL, "child" }, { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("child") } } }) },
  next = { "child" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "outer history 2")
-- get child graph history
local child_history = app:get_state_history(outer_history[2].tasks[1].state)
T.eq(#child_history, 1, "child history length")
like(snap(child_history[1]), Snapshot{
  values = { my_key = "hi my value" },
  next = { "child_1" },
  config = child_state_expected.config,
  metadata = { source = "loop", step = 0, parents = { [""] = ANY } },
  parent_config = nil,
  tasks = { Task("child_1", { PULL, "child_1" }, { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("child:") } } }) },
}, "child history")
-- get grandchild graph history
local grandchild_history = app:get_state_history(child_history[1].tasks[1].state)
T.eq(#grandchild_history, 1, "grandchild history length")
like(snap(grandchild_history[1]), grandchild_expected, "grandchild history")
T.finish()
