-- langgraph: test_retry.py::test_runtime_execution_info_defaults_without_retry
-- runtime.execution_info is ctx.execution_info, read while the node runs.
local sst = superstep
local T = require("checks")

local captured = {}
local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("node", function(state, input, ctx)
  local info = ctx.execution_info or {}
  captured.node_attempt = info.node_attempt
  captured.node_first_attempt_time = info.node_first_attempt_time
  return { foo = "ok" }
end)
g:add_edge(sst.START, "node")
local graph = g:compile()

local result = graph:invoke({ foo = "" })
T.eq(result.foo, "ok", "result")
T.eq(captured.node_attempt, 1, "node_attempt")
T.check(math.type(captured.node_first_attempt_time) == "float", "node_first_attempt_time is a float")
T.finish()
