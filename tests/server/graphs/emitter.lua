-- emitter (graphs.ts `emitter`): node `emit` writes n custom stream events
-- {i = 0..n-1} (n defaults to 1) with ctx.emit (stream mode "custom") and
-- appends "emit" to `log`; then node `done` appends "done".
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  n = sst.reducers.replace,
  log = { reducer = sst.reducers.append, default = {} },
}
g:add_node("emit", function(state, input, ctx)
  for i = 0, (state.n or 1) - 1 do ctx.emit({ i = i }) end
  return { log = { "emit" } }
end)
g:add_node("done", function() return { log = { "done" } } end)
g:add_edge(sst.START, "emit")
g:add_edge("emit", "done")
g:add_edge("done", sst.END)
return g:compile()
