-- langgraph: test_retry.py::test_set_node_defaults_error_handler_receives_runnable_config
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- The handler's config is ctx.config.

local captured = {}
local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{ error_handler = function(state, err, ctx)
  captured.thread_id = ctx.config.configurable.thread_id
  return { foo = "handled" }
end }
g:add_node("always_failing", function(state) error("boom") end)
g:add_edge(sst.START, "always_failing")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local thread_id = "9b1deb4d-3b7d-4bad-9bdd-2b0d7b3dcb6d"  -- str(uuid4())
local result = graph:invoke({ foo = "" }, lg.thread(thread_id))
T.eq(result.foo, "handled", "result")
T.eq(captured.thread_id, thread_id, "thread_id")
T.finish()
