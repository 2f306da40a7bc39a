-- approval (graphs.ts `approval`): node `ask` calls interrupt({question = "ok?"});
-- on resume the resume value becomes `approved`.
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  topic = sst.reducers.replace,
  approved = sst.reducers.replace,
}
g:add_node("ask", function()
  local answer = sst.interrupt({ question = "ok?" })
  return { approved = answer }
end)
g:add_edge(sst.START, "ask")
g:add_edge("ask", sst.END)
return g:compile()
