-- recorder (crash.mjs): node `step` adds 1 to `count` (sum reducer, default 0)
-- and appends count+1 to `log` (append list), looping until count >= n. Every
-- execution of `step` first appends the line "<thread_id> <count+1>\n" to the
-- file named by $SST_RECORD_FILE (when set): a side table of executions, so a
-- test that kills the server can count how often each step really ran. The
-- step sleeps 20-50 ms in all, half before and half after the record line,
-- so a kill lands mid-run, and often between the record line and the commit
-- of the step (that execution is then recorded twice: a step in flight at a
-- kill runs again, a committed step must not).
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  n = sst.reducers.replace,
  count = { reducer = sst.reducers.sum, default = 0 },
  log = { reducer = sst.reducers.append, default = {} },
}
g:add_node("step", function(state, _, ctx)
  sst.sleep(0.01 + math.random() * 0.015)
  local k = (state.count or 0) + 1
  local path = os.getenv("SST_RECORD_FILE")
  if path and path ~= "" then
    local cfg = ctx.config or {}
    local info = ctx.execution_info or {}
    local tid = (cfg.configurable or {}).thread_id or cfg.thread_id or info.thread_id or "?"
    local f = assert(io.open(path, "a"))
    f:write(string.format("%s %d\n", tostring(tid), k))
    f:flush()
    f:close()
  end
  sst.sleep(0.01 + math.random() * 0.015)
  return { count = 1, log = { k } }
end)
g:add_edge(sst.START, "step")
g:add_conditional_edges("step", function(state)
  if state.count >= (state.n or 1) then return sst.END end
  return "step"
end, { "step", sst.END })
return g:compile()
