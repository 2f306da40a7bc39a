-- langgraph: test_retry.py::test_should_retry_default_retry_on
-- RetryPolicy() is retry = {} over the default policy (no retry_on). More
-- kinds: ConnectionError and the 5xx HTTP errors (httpx, requests) are
-- SST_EUNAVAILABLE, a requests.HTTPError without response SST_EIO, 4xx HTTP
-- errors SST_EINVAL, ArithmeticError SST_ERANGE, ImportError and
-- OSError("file not found") SST_ENOTFOUND, SyntaxError SST_EPARSE,
-- NodeTimeoutError SST_ETIMEOUT, CustomException(Exception) a plain error().
-- NameError, RuntimeError, ReferenceError, StopIteration and
-- StopAsyncIteration (Python's own classes, which a plain Lua error() cannot
-- be told from CustomException) are left out.
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

-- Create a RetryPolicy with default_retry_on
local policy = {}

-- Should retry on ConnectionError
T.eq(should_retry(policy, Err("SST_EUNAVAILABLE", "connection refused")), true, "ConnectionError")

-- Should not retry on common programming errors
T.eq(should_retry(policy, Err("SST_EINVAL", "invalid value")), false, "ValueError")
T.eq(should_retry(policy, Err("SST_ETYPE", "invalid type")), false, "TypeError")
T.eq(should_retry(policy, Err("SST_ERANGE", "division by zero")), false, "ArithmeticError")
T.eq(should_retry(policy, Err("SST_ENOTFOUND", "module not found")), false, "ImportError")
T.eq(should_retry(policy, Err("SST_ENOTFOUND", "key not found")), false, "LookupError")
T.eq(should_retry(policy, Err("SST_EPARSE", "invalid syntax")), false, "SyntaxError")
T.eq(should_retry(policy, Err("SST_ENOTFOUND", "file not found")), false, "OSError")

-- Should retry on httpx.HTTPStatusError with 5xx status code
T.eq(should_retry(policy, Err("SST_EUNAVAILABLE", "server error")), true, "httpx 503")
-- Should not retry on httpx.HTTPStatusError with 4xx status code
T.eq(should_retry(policy, Err("SST_EINVAL", "not found")), false, "httpx 404")
-- Should retry on requests.HTTPError with 5xx status code
T.eq(should_retry(policy, Err("SST_EUNAVAILABLE", "bad gateway")), true, "requests 502")
-- Should not retry on requests.HTTPError with 4xx status code
T.eq(should_retry(policy, Err("SST_EINVAL", "bad request")), false, "requests 400")
-- Should retry on requests.HTTPError with no response
T.eq(should_retry(policy, Err("SST_EIO", "connection error")), true, "requests without response")

-- NodeTimeoutError should be retryable by default
T.eq(should_retry(policy, Err("SST_ETIMEOUT", "node timed out")), true, "NodeTimeoutError")

-- Should retry on other exceptions by default
T.eq(should_retry(policy, "custom error"), true, "CustomException")
T.finish()
