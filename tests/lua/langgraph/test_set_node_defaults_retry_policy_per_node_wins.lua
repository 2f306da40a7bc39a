-- langgraph: test_retry.py::test_set_node_defaults_retry_policy_per_node_wins
-- set_node_defaults(retry_policy=RetryPolicy(...)) is g:set_node_defaults{ retry = {...} }.
-- ValueError raised by the node is a plain Lua error() (kind SST_ETASK).
local sst = superstep
local T = require("checks")

local attempts = 0
local function flaky_node(state)
  attempts = attempts + 1
  if attempts < 2 then error("not yet") end
  return { foo = "ok" }
end

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{ retry = { max_attempts = 1, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } } }
g:add_node("flaky", flaky_node,
           { retry = { max_attempts = 3, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } } })
g:add_edge(sst.START, "flaky")
local graph = g:compile()

local result = graph:invoke({ foo = "" })
T.eq(result.foo, "ok", "result")
T.eq(attempts, 2, "attempts")
T.finish()
