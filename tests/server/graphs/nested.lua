-- nested (superstep only; LangGraph.js's peer server does not serve it): a
-- compiled graph as a node, for stream_subgraphs ("updates|child:<task id>").
-- The child's node `work` sets `result` from `topic`; the parent then runs
-- `finish`, which appends "finish" to `log`.
local sst = superstep or require("superstep")

local child = sst.StateGraph{
  topic = sst.reducers.replace,
  result = sst.reducers.replace,
}
child:add_node("work", function(state) return { result = "done:" .. state.topic } end)
child:add_edge(sst.START, "work")
child:add_edge("work", sst.END)

local g = sst.StateGraph{
  topic = sst.reducers.replace,
  result = sst.reducers.replace,
  log = { reducer = sst.reducers.append, default = {} },
}
g:add_node("child", child:compile())
g:add_node("finish", function() return { log = { "finish" } } end)
g:add_edge(sst.START, "child")
g:add_edge("child", "finish")
g:add_edge("finish", sst.END)
return g:compile()
