-- langgraph: test_pregel.py::test_parent_command_goto
-- `graph.step_timeout = 1` is the compile option `step_timeout = 1`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function state()
  return sst.StateGraph{ dialog_state = { reducer = sst.reducers.append, default = sst.array{} } }
end

for _, subgraph_persist in ipairs({ true, false }) do
  for _, with_timeout in ipairs({ false, "inner", "outer", "both" }) do
    local sb = state()
    sb:add_node("node_a_child", function() return { dialog_state = { "a_child_state" } } end)
    sb:add_node("node_b_child", function()
      return sst.Command{ graph = sst.PARENT, ["goto"] = "node_b_parent",
                          update = { dialog_state = { "b_child_state" } } }
    end)
    sb:add_edge(sst.START, "node_a_child")
    sb:add_edge("node_a_child", "node_b_child")
    local inner = with_timeout == "inner" or with_timeout == "both"
    local sub_graph = sb:compile{ checkpointer = subgraph_persist, step_timeout = inner and 1 or nil }

    local mb = state()
    mb:add_node("node_b_parent", function() return { dialog_state = { "node_b_parent" } } end)
    mb:add_edge(sst.START, "subgraph_node")
    mb:add_node("subgraph_node", sub_graph, { ends = { "node_b_parent" } })
    local outer = with_timeout == "outer" or with_timeout == "both"
    local main_graph = mb:compile{ checkpointer = sst.MemorySaver(), name = "parent",
                                   step_timeout = outer and 1 or nil }

    T.eq(main_graph:invoke({ dialog_state = { "init_state" } }, lg.thread("1")),
         { dialog_state = { "init_state", "b_child_state", "node_b_parent" } },
         string.format("persist=%s timeout=%s", tostring(subgraph_persist), tostring(with_timeout)))
  end
end
T.finish()
