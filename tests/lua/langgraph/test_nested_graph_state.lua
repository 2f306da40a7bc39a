-- langgraph: test_large_cases.py::test_nested_graph_state
-- AnyStr()/AnyStr(prefix)/AnyDict() are the predicates ANY, prefix(...) and
-- ANY_MAP (a checkpoint_map holding the root "" entry) compared by like().
-- get_state(config, subgraphs=True) is get_state(config, { subgraphs = true }).
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = lg.PULL

local like, ANY, prefix, ANY_MAP = lg.like, lg.ANY, lg.prefix, lg.ANY_MAP
local snap, Snapshot, Task, root_config = lg.snap, lg.Snapshot, lg.Task, lg.root_config

local inner = sst.StateGraph{ my_key = sst.reducers.replace, my_other_key = sst.reducers.replace }
inner:add_node("inner_1", function(state) return { my_key = state.my_key .. " here", my_other_key = state.my_key } end)
inner:add_node("inner_2", function(state) return { my_key = state.my_key .. " and there", my_other_key = state.my_key } end)
inner:add_edge("inner_1", "inner_2")
inner:set_entry_point("inner_1")
inner:set_finish_point("inner_2")

local graph = sst.StateGraph{ my_key = sst.reducers.replace, other_parent_key = sst.reducers.replace }
graph:add_node("outer_1", function(state) return { my_key = "hi " .. state.my_key } end)
graph:add_node("inner", inner:compile{ interrupt_before = { "inner_2" } })
graph:add_node("outer_2", function(state) return { my_key = state.my_key .. " and back again" } end)
graph:set_entry_point("outer_1")
graph:add_edge("outer_1", "inner")
graph:add_edge("inner", "outer_2")
graph:set_finish_point("outer_2")

local app = graph:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
app:invoke({ my_key = "my value" }, config, { durability = "exit" })
-- test state w/ nested subgraph state (right after interrupt)
-- first get_state without subgraph state
local expected = Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("inner", { PULL, "inner" }, { state = { configurable = { thread_id = "1", checkpoint_ns = ANY } } }) },
  next = { "inner" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}
like(snap(app:get_state(config)), expected, "get_state")
local history = app:get_state_history(config)
T.eq(#history, 1, "history length")
like(snap(history[1]), expected, "history")
-- now, get_state with subgraphs state
like(snap(app:get_state(config, { subgraphs = true })), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("inner", { PULL, "inner" }, { state = Snapshot{
    values = { my_key = "hi my value here", my_other_key = "hi my value" },
    tasks = { Task("inner_2", { PULL, "inner_2" }) },
    next = { "inner_2" },
    config = { configurable = { thread_id = "1", checkpoint_ns = prefix("inner:"), checkpoint_id = ANY,
                                checkpoint_map = ANY_MAP } },
    metadata = { parents = { [""] = ANY }, source = "loop", step = 1 },
    parent_config = nil,
  } }) },
  next = { "inner" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "get_state subgraphs")

-- get_state_history for a subgraph returns its checkpoints
local child_history = app:get_state_history(app:get_state(config).tasks[1].state)
T.eq(#child_history, 1, "child history length")
like(snap(child_history[1]), Snapshot{
  values = { my_key = "hi my value here", my_other_key = "hi my value" },
  next = { "inner_2" },
  config = { configurable = { thread_id = "1", checkpoint_ns = prefix("inner:"), checkpoint_id = ANY,
                              checkpoint_map = ANY_MAP } },
  metadata = { source = "loop", step = 1, parents = { [""] = ANY } },
  parent_config = nil,
  tasks = { Task("inner_2", { PULL, "inner_2" }) },
}, "child history")

-- resume
app:invoke(nil, config, { durability = "exit" })
-- test state w/ nested subgraph state (after resuming from interrupt)
local final = Snapshot{
  values = { my_key = "hi my value here and there and back again" },
  next = sst.array{},
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 3 },
  parent_config = root_config("1"),
}
like(snap(app:get_state(config)), final, "get_state after resume")
-- test full history at the end
local actual_history = app:get_state_history(config)
local expected_history = { final, Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("inner", { PULL, "inner" }, { state = { configurable = { thread_id = "1", checkpoint_ns = ANY } } }) },
  next = { "inner" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
} }
T.eq(#actual_history, #expected_history, "history length at the end")
for i, exp in ipairs(expected_history) do
  if actual_history[i] then
    like(snap(actual_history[i]), exp, "history " .. i)
    -- test looking up parent state by checkpoint ID
    like(snap(app:get_state(actual_history[i].config)), exp, "get_state by checkpoint " .. i)
  end
end
T.finish()
