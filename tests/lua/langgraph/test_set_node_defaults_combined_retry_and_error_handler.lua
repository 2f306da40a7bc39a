-- langgraph: test_retry.py::test_set_node_defaults_combined_retry_and_error_handler
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- Retries are exhausted first, then the error handler runs. str(error.error)
-- is the error's message.

local attempts = 0
local captured = {}
local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{
  retry = { max_attempts = 2, initial_interval = 0.01, jitter = false, retry_on = { "SST_ETASK" } },
  error_handler = function(state, err)
    captured.error = err.error.message
    return { foo = "handled" }
  end,
}
g:add_node("fail", function(state)
  attempts = attempts + 1
  error("Always fails", 0)
end)
g:add_edge(sst.START, "fail")
local graph = g:compile()

local result = graph:invoke({ foo = "" })
T.eq(result.foo, "handled", "result")
T.eq(attempts, 2, "attempts")
T.eq(captured.error, "Always fails", "error message")
T.finish()
