-- langgraph: test_retry.py::test_should_retry_on_single_exception
local sst = superstep
local T = require("checks")

-- _should_retry_on(policy, exc) is restated through a graph: a node that
-- raises `exc` on every attempt runs twice under policy (max_attempts = 2)
-- when the error is retried, once otherwise. Python exception classes are
-- superstep error kinds: the node raises error objects { code = kind,
-- message = ... } (ValueError: SST_EINVAL, TypeError: SST_ETYPE, KeyError
-- and LookupError: SST_ENOTFOUND); a plain `Exception` is a plain Lua error()
-- (SST_ETASK).
local function should_retry(policy, exc)
  local p = { max_attempts = 2, initial_interval = 0.001, jitter = false }
  for k, v in pairs(policy) do p[k] = v end
  local tries = 0
  local g = sst.StateGraph{ foo = sst.reducers.replace }
  g:add_node("node", function()
    tries = tries + 1
    error(exc, 0)
  end, { retry = p })
  g:add_edge(sst.START, "node")
  pcall(function() g:compile():invoke({ foo = "" }) end)
  return tries > 1
end
local function Err(code, message) return { code = code, message = message } end

local policy = { retry_on = { "SST_EINVAL" } }  -- RetryPolicy(retry_on=ValueError)

-- Should retry on ValueError
T.eq(should_retry(policy, Err("SST_EINVAL", "test error")), true, "ValueError")

-- Should not retry on other exceptions
T.eq(should_retry(policy, Err("SST_ETYPE", "test error")), false, "TypeError")
T.eq(should_retry(policy, "test error"), false, "Exception")
T.finish()
