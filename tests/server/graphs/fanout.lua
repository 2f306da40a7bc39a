-- fanout (graphs.ts `fanout`): `router` is a no-op; a conditional edge sends
-- n tasks Send("worker", {i = 0..n-1}); each worker appends its i to `results`
-- (append reducer, default []).
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  n = sst.reducers.replace,
  results = { reducer = sst.reducers.append, default = {} },
}
g:add_node("router", function() return {} end)
g:add_node("worker", function(state, arg) return { results = { arg.i } } end)
g:add_edge(sst.START, "router")
g:add_conditional_edges("router", function(state)
  local sends = {}
  for i = 0, (state.n or 0) - 1 do sends[#sends + 1] = sst.Send("worker", { i = i }) end
  return sends
end, { "worker" })
g:add_edge("worker", sst.END)
return g:compile()
