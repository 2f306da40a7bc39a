-- langgraph: test_pregel.py::test_subgraph_checkpoint_true
-- The durability parameter is a loop (a fresh MemorySaver each time).
-- `stream(..., subgraphs=True)` is `stream(x, config, "updates", { subgraphs = true })`,
-- which yields `namespace, chunk` (the namespace as a list).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function concat() return { reducer = function(a, b) return a .. b end, default = "" } end

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local inner = sst.StateGraph{ my_key = concat(), my_other_key = sst.reducers.replace }
  inner:add_node("inner_1", function(state) return { my_key = " got here", my_other_key = state.my_key } end)
  inner:add_node("inner_2", function() return { my_key = " and there" } end)
  inner:add_edge("inner_1", "inner_2")
  inner:set_entry_point("inner_1")
  inner:set_finish_point("inner_2")

  local graph = sst.StateGraph{ my_key = sst.reducers.replace }
  graph:add_node("inner", inner:compile{ checkpointer = true })
  graph:add_edge(sst.START, "inner")
  graph:add_conditional_edges("inner", function(s)
    local _, n = s.my_key:gsub("there", "")
    if n < 2 then return "inner" end
    return sst.END
  end)
  local app = graph:compile{ checkpointer = sst.MemorySaver() }

  local config = lg.thread("2")
  T.eq(lg.collect(app:stream({ my_key = "" }, config, "updates", { subgraphs = true, durability = durability })), {
    { { "inner" }, { inner_1 = { my_key = " got here", my_other_key = "" } } },
    { { "inner" }, { inner_2 = { my_key = " and there" } } },
    { sst.array{}, { inner = { my_key = " got here and there" } } },
    { { "inner" }, { inner_1 = { my_key = " got here", my_other_key = " got here and there got here and there" } } },
    { { "inner" }, { inner_2 = { my_key = " and there" } } },
    { sst.array{}, { inner = { my_key = " got here and there got here and there got here and there" } } },
  }, durability .. ": stream")

  local checkpoints = app:get_state_history(config)
  T.eq(#checkpoints, durability ~= "exit" and 4 or 1, durability .. ": history length")
end
T.finish()
