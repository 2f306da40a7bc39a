-- W1 (../shared/peers/langgraphjs): one node `inc` adds 1 to a sum-reduced
-- `counter` and loops back until counter reaches n (n supersteps).
--   superstep run examples/lua/w1_loop.lua --input '{"counter":0,"n":1000}'
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  counter = { reducer = sst.reducers.sum, default = 0 },
  n = sst.reducers.replace,
}
g:add_node("inc", function(state) return { counter = 1 } end)
g:add_edge(sst.START, "inc")
g:add_conditional_edges("inc", function(state)
  if state.counter >= state.n then return sst.END end
  return "inc"
end, { "inc", sst.END })
return g:compile{ recursion_limit = 10000000 }
