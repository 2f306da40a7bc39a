-- langgraph: test_retry.py::test_error_handler_resumes_after_crash_multiple_nodes
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- The threading.Event that makes node_b wait until handler_a has started
-- (Python threads) is left out; the counts and results are kept.

local call_count = { a = 0, b = 0, handler_a = 0, handler_b = 0 }
local handler_should_fail = true

local g = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("a", function(state)
  call_count.a = call_count.a + 1
  error("a failed")
end, { error_handler = function(state, err)
  call_count.handler_a = call_count.handler_a + 1
  T.eq(err.node, "a", "handler_a error.node")
  T.check(tostring(err.error.message):find("a failed", 1, true) ~= nil, "handler_a error message")
  if handler_should_fail then error("handler_a crash") end
  return { results = { "recovered_a:" .. err.node } }
end })
g:add_node("b", function(state)
  call_count.b = call_count.b + 1
  error("b failed")
end, { error_handler = function(state, err)
  call_count.handler_b = call_count.handler_b + 1
  T.eq(err.node, "b", "handler_b error.node")
  T.check(tostring(err.error.message):find("b failed", 1, true) ~= nil, "handler_b error message")
  if handler_should_fail then error("handler_b crash") end
  return { results = { "recovered_b:" .. err.node } }
end })
g:add_edge(sst.START, "a")
g:add_edge(sst.START, "b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("t1")
lg.raises(function() graph:invoke({ results = sst.array{} }, config) end, "NodeError")
T.eq(call_count, { a = 1, b = 1, handler_a = 1, handler_b = 1 }, "first run counts")

-- Resume: both handlers should run again, NOT the original nodes
handler_should_fail = false
local result = graph:invoke(nil, config)
T.eq(call_count, { a = 1, b = 1, handler_a = 2, handler_b = 2 }, "resume counts")
local has = {}
for _, r in ipairs(result.results or {}) do has[r] = true end
T.check(has["recovered_a:a"], "recovered_a:a")
T.check(has["recovered_b:b"], "recovered_b:b")
T.finish()
