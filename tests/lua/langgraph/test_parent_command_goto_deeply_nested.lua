-- langgraph: test_pregel.py::test_parent_command_goto_deeply_nested
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function state()
  return sst.StateGraph{ dialog_state = { reducer = sst.reducers.append, default = sst.array{} } }
end

for _, subgraph_persist in ipairs({ true, false }) do
  -- Level 3: Deepest subgraph that issues Command.PARENT
  local ssb = state()
  ssb:add_node("sub_sub_child", function()
    return sst.Command{ graph = sst.PARENT, ["goto"] = "sub_child_3",
                        update = { dialog_state = { "sub_sub_child" } } }
  end)
  ssb:add_edge(sst.START, "sub_sub_child")
  local sub_sub_graph = ssb:compile{ name = "sub_sub_graph", checkpointer = subgraph_persist }

  -- Level 2: Middle subgraph containing Level 3
  local sb = state()
  sb:add_node("sub_child_1", function() return { dialog_state = { "sub_child_1" } } end)
  sb:add_node("sub_child_2", sub_sub_graph, { ends = { "sub_child_3" } })
  sb:add_node("sub_child_3", function() return { dialog_state = { "sub_child_3" } } end)
  sb:add_edge(sst.START, "sub_child_1")
  sb:add_edge("sub_child_1", "sub_child_2")
  local sub_graph = sb:compile{ name = "sub_graph", checkpointer = subgraph_persist }

  -- Level 1: Main graph containing Level 2
  local b = state()
  b:add_node("child_1", function() return { dialog_state = { "child_1" } } end)
  b:add_node("child_2", sub_graph)
  b:add_edge(sst.START, "child_1")
  b:add_edge("child_1", "child_2")
  local graph = b:compile{ name = "main_graph", checkpointer = sst.MemorySaver() }

  -- State duplication occurs due to the append reducer merging the subgraph's state
  T.eq(graph:invoke({ dialog_state = { "init" } }, lg.thread("1")), {
    dialog_state = { "init", "child_1", "init", "child_1", "sub_child_1", "sub_sub_child", "sub_child_3" },
  }, "persist=" .. tostring(subgraph_persist))
end
T.finish()
