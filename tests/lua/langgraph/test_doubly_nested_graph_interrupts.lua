-- langgraph: test_pregel.py::test_doubly_nested_graph_interrupts
-- The durability parameter is a loop (a fresh MemorySaver each time). The
-- CONFIG_KEY_NODE_FINISHED callback (a Python config internal) and its
-- `nodes` assertions are left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = durability .. ": "
  local opts = { durability = durability }
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

  local config = lg.thread("1")
  T.eq(app:invoke({ my_key = "my value" }, config, opts), { my_key = "hi my value" }, what .. "invoke 1")
  T.eq(app:invoke(nil, config, opts), { my_key = "hi my value here and there and back again" }, what .. "invoke 2")

  config = lg.thread("2")
  T.eq(lg.collect(app:stream({ my_key = "my value" }, config, "updates", opts)), {
    { parent_1 = { my_key = "hi my value" } },
    { __interrupt__ = sst.array{} },
  }, what .. "updates 1")
  T.eq(lg.collect(app:stream(nil, config, "updates", opts)), {
    { child = { my_key = "hi my value here and there" } },
    { parent_2 = { my_key = "hi my value here and there and back again" } },
  }, what .. "updates 2")

  config = lg.thread("3")
  T.eq(lg.collect(app:stream({ my_key = "my value" }, config, "values", opts)),
       { { my_key = "my value" }, { my_key = "hi my value" } }, what .. "values 1")
  T.eq(lg.collect(app:stream(nil, config, "values", opts)), {
    { my_key = "hi my value" },
    { my_key = "hi my value here and there" },
    { my_key = "hi my value here and there and back again" },
  }, what .. "values 2")
end
T.finish()
