-- langgraph: test_retry.py::test_graph_with_multiple_retry_policies
-- Python exception classes are superstep error kinds: the node raises error
-- objects { code = kind, message = ... } (ValueError: SST_EINVAL, KeyError:
-- SST_ENOTFOUND) and retry_on lists kinds. retry_policy=(p1, p2) is a list of
-- policies, retry = { p1, p2 } (the first whose retry_on matches applies).
-- time.sleep is not mocked (the intervals are 0.01 s and 0.02 s).
local sst = superstep
local T = require("checks")

local attempt_counts = { value_error = 0, key_error = 0 }

local function failing_node(state)
  local error_type = state.error_type
  if error_type == "value_error" then
    attempt_counts.value_error = attempt_counts.value_error + 1
    if attempt_counts.value_error < 2 then error({ code = "SST_EINVAL", message = "Value error" }) end
  elseif error_type == "key_error" then
    attempt_counts.key_error = attempt_counts.key_error + 1
    if attempt_counts.key_error < 3 then error({ code = "SST_ENOTFOUND", message = "Key error" }) end
  end
  return { foo = "recovered_from_" .. error_type }
end

-- Create multiple retry policies
local value_error_policy = { max_attempts = 2, initial_interval = 0.01, jitter = false, retry_on = { "SST_EINVAL" } }
local key_error_policy = { max_attempts = 3, initial_interval = 0.02, jitter = false, retry_on = { "SST_ENOTFOUND" } }

-- Create and compile the graph with a list of retry policies
local g = sst.StateGraph{ foo = sst.reducers.replace, error_type = sst.reducers.replace }
g:add_node("failing_node", failing_node, { retry = { value_error_policy, key_error_policy } })
g:add_edge(sst.START, "failing_node")
local graph = g:compile()

-- Test ValueError scenario
local ok, result_value_error = pcall(function() return graph:invoke({ foo = "", error_type = "value_error" }) end)
T.check(ok, "value_error run: " .. tostring(result_value_error))
T.eq(attempt_counts.value_error, 2, "value_error attempts")
T.eq(ok and result_value_error.foo, "recovered_from_value_error", "value_error result")

-- Reset attempt counts
attempt_counts = { value_error = 0, key_error = 0 }

-- Test KeyError scenario
local ok2, result_key_error = pcall(function() return graph:invoke({ foo = "", error_type = "key_error" }) end)
T.check(ok2, "key_error run: " .. tostring(result_key_error))
T.eq(attempt_counts.key_error, 3, "key_error attempts")
T.eq(ok2 and result_key_error.foo, "recovered_from_key_error", "key_error result")
T.finish()
