-- flaky (tests/web): `check` fails with "bad input: <why>" when the input has
-- `why`, else writes `ok = true`; `note`, in the same superstep, always
-- succeeds (its write stays pending on the checkpoint when `check` fails).
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  why = sst.reducers.replace,
  ok = sst.reducers.replace,
  notes = { reducer = sst.reducers.append, default = {} },
}
g:add_node("check", function(state)
  if state.why then error("bad input: " .. tostring(state.why)) end
  return { ok = true }
end)
g:add_node("note", function() return { notes = { "noted" } } end)
g:add_edge(sst.START, "check")
g:add_edge(sst.START, "note")
g:add_edge({ "check", "note" }, sst.END)
return g:compile()
