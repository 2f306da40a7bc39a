-- counter (graphs.ts `counter` of ../shared/peers/langgraphjs-server): node `inc`
-- adds 1 to `count` (sum reducer, default 0) and loops back to itself until
-- count >= n (n defaults to 1). An optional `delay_ms` makes every step sleep
-- first (the cancel / multitask / streaming tests use it). n > 25 needs
-- config.recursion_limit > n: the default limit of 25 gives a GraphRecursionError.
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  n = sst.reducers.replace,
  delay_ms = sst.reducers.replace,
  count = { reducer = sst.reducers.sum, default = 0 },
}
g:add_node("inc", function(state)
  local d = state.delay_ms
  if d and d > 0 then sst.sleep(d / 1000) end
  return { count = 1 }
end)
g:add_edge(sst.START, "inc")
g:add_conditional_edges("inc", function(state)
  if state.count >= (state.n or 1) then return sst.END end
  return "inc"
end, { "inc", sst.END })
return g:compile()
