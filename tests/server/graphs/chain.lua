-- chain (graphs.ts `chain`): a -> b -> c, each node appends its own name to
-- `items` (append reducer, default []).
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  items = { reducer = sst.reducers.append, default = {} },
}
g:add_node("a", function() return { items = { "a" } } end)
g:add_node("b", function() return { items = { "b" } } end)
g:add_node("c", function() return { items = { "c" } } end)
g:add_edge(sst.START, "a")
g:add_edge("a", "b")
g:add_edge("b", "c")
g:add_edge("c", sst.END)
return g:compile()
