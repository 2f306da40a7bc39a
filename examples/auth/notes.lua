-- notes (examples/auth, docs/auth.md): a note-taker served to many users. Each run
-- appends its input's `note` to the thread's `notes`, signed with the name of the user
-- the run belongs to: the server passes the authenticated user to the graph as
-- config.configurable.langgraph_auth_user ({identity, permissions, ...}), as
-- LangGraph's server does, so a node can act on the user's behalf.
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  note = sst.reducers.replace,
  notes = { reducer = sst.reducers.append, default = {} },
  by = sst.reducers.replace,
}
g:add_node("take", function(state, _, ctx)
  local cfg = (ctx and ctx.config) or {}
  local user = (cfg.configurable or {}).langgraph_auth_user or {}
  local who = user.identity or "anonymous"
  return { notes = { string.format("%s: %s", who, tostring(state.note or "")) }, by = who }
end)
g:add_edge(sst.START, "take")
g:add_edge("take", sst.END)
return g:compile()
