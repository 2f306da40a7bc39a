-- langgraph: test_pregel.py::test_timeout_with_parent_command
-- ParentCommand has no kind in lg.lua: the error's `command` (the
-- Command that escaped the root graph) is checked.
-- `graph.step_timeout = 1` is the compile option `step_timeout = 1`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, with_timeout in ipairs({ true, false }) do
  local b = sst.StateGraph{ value = sst.reducers.replace }
  b:add_node("parent_cmd", function()
    sst.sleep(0.1) -- some delay before raising (not CPU time: a busy machine gives little)
    return sst.Command{ graph = sst.PARENT, ["goto"] = "test_cmd", update = { key = "value" } }
  end)
  b:set_entry_point("parent_cmd")
  local graph = b:compile{ checkpointer = sst.MemorySaver(), step_timeout = with_timeout and 1 or nil }

  -- Should propagate parent command, not timeout
  local ok, err = pcall(graph.invoke, graph, { value = "start" }, lg.thread("1"))
  local what = "with_timeout=" .. tostring(with_timeout)
  T.check(not ok, what .. ": expected ParentCommand")
  local cmd = type(err) == "table" and err.command or nil
  T.check(cmd ~= nil, what .. ": error carries the command: " .. tostring(err))
  if cmd then
    T.eq(cmd["goto"], "test_cmd", what .. ": goto")
    T.eq(cmd.update, { key = "value" }, what .. ": update")
  end
end
T.finish()
