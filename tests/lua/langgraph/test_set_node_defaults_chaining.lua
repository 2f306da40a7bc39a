-- langgraph: test_retry.py::test_set_node_defaults_chaining
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- set_node_defaults() is chainable and can be called in any order relative
-- to add_node: here it is called after add_node (Lua methods are not chained).

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("a", function(state) error("boom") end)
g:add_edge(sst.START, "a")
g:set_node_defaults{
  retry = { max_attempts = 1, initial_interval = 0.01, jitter = false },
  error_handler = function(state, err) return { foo = "handled" } end,
}
local graph = g:compile()

local result = graph:invoke({ foo = "" })
T.eq(result.foo, "handled", "result")
T.finish()
