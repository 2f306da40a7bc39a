-- W2 (../shared/peers/langgraphjs): `split` fans out one Send("work", {x})
-- per item; each returns {results = {2x}} into an append field; `join` sums.
--   superstep run examples/lua/w2_fanout.lua --input '{"items":[1,2,3]}'
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  items = sst.reducers.replace,
  results = { reducer = sst.reducers.append, default = {} },
  total = sst.reducers.replace,
}
g:add_node("split", function() return nil end)
g:add_node("work", function(state, arg) return { results = { arg.x * 2 } } end)
g:add_node("join", function(state)
  local total = 0
  for _, r in ipairs(state.results) do total = total + r end
  return { total = total }
end)
g:add_edge(sst.START, "split")
g:add_conditional_edges("split", function(state)
  local sends = {}
  for i, x in ipairs(state.items) do sends[i] = sst.Send("work", { x = x }) end
  return sends
end, { "work" })
g:add_edge("work", "join")
g:add_edge("join", sst.END)
return g:compile{}
