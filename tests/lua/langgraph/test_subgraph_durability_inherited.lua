-- langgraph: test_pregel.py::test_subgraph_durability_inherited
-- The durability parameter is a loop. `checkpointer.list(config)` (every
-- namespace of the thread) is `saver:list(config)`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function concat() return { reducer = function(a, b) return a .. b end, default = "" } end

for i, durability in ipairs({ "sync", "async", "exit" }) do
  local saver = sst.MemorySaver()
  local inner = sst.StateGraph{ my_key = concat(), my_other_key = sst.reducers.replace }
  inner:add_node("inner_1", function(state) return { my_key = " got here", my_other_key = state.my_key } end)
  inner:add_node("inner_2", function() return { my_key = " and there" } end)
  inner:add_edge("inner_1", "inner_2")
  inner:set_entry_point("inner_1")
  inner:set_finish_point("inner_2")

  local inner_app = inner:compile{ checkpointer = saver }
  local graph = sst.StateGraph{ my_key = sst.reducers.replace }
  graph:add_node("inner", inner_app)
  graph:add_edge(sst.START, "inner")
  graph:add_conditional_edges("inner", function(s)
    local _, n = s.my_key:gsub("there", "")
    if n < 2 then return "inner" end
    return sst.END
  end)
  local app = graph:compile{ checkpointer = saver }
  local config = lg.thread("durability-inherited-" .. i)
  app:invoke({ my_key = "" }, config, { subgraphs = true, durability = durability })
  T.eq(#saver:list(config), durability ~= "exit" and 12 or 1, durability .. ": checkpoints")
end
T.finish()
