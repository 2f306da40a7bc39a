-- langgraph: test_retry.py::test_error_handler_resumes_after_crash
-- set_node_defaults(error_handler=..., retry_policy=...) is
-- g:set_node_defaults{ error_handler = ..., retry = ... }; an error handler is
-- function(state, error, ctx) with `error` LangGraph's NodeError:
-- { node = name, error = { code, message } }. Python exceptions raised by
-- nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")
-- If the error handler crashes, resuming should re-schedule the handler (not
-- re-execute the original failed node). str(error.error) is its message.

local call_count = { node = 0, handler = 0 }
local captured_errors = {}
local handler_should_fail = true

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:set_node_defaults{ error_handler = function(state, err)
  call_count.handler = call_count.handler + 1
  captured_errors[#captured_errors + 1] = sst.to_table(err)
  if handler_should_fail then error("handler crash") end
  return { foo = "recovered" }
end }
g:add_node("fail", function(state)
  call_count.node = call_count.node + 1
  error("boom", 0)
end)
g:add_edge(sst.START, "fail")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("t1")
-- First invoke: node fails -> handler runs -> handler crashes -> run fails
lg.raises(function() graph:invoke({ foo = "" }, config) end, "NodeError", "handler crash")
T.eq(call_count.node, 1, "node calls")
T.eq(call_count.handler, 1, "handler calls")
T.eq(captured_errors[1] and captured_errors[1].node, "fail", "error 1 node")
T.eq(captured_errors[1] and captured_errors[1].error.message, "boom", "error 1 message")

-- Added: the state between the runs, as LangGraph's get_state and get_tuple
-- show it: the failed node's task keeps its own error, and the pending writes
-- hold it and the handler's crash, each under its own task id.
local st = graph:get_state(config)
T.eq(st.next, { "fail" }, "next after the crash")
T.eq(st.tasks and #st.tasks, 1, "one task after the crash")
local ftask = (st.tasks or {})[1] or {}
T.eq(ftask.name, "fail", "the failed task")
T.check(type(ftask.error) == "string" and ftask.error:find("boom", 1, true) == 1, "task error: " .. tostring(ftask.error))
local pw = st.pending_writes or {}
T.eq(#pw, 2, "pending writes after the crash")
T.eq(pw[1] and { pw[1][1], pw[1][2] }, { ftask.id, "__error__" }, "the node's error write")
T.check(pw[2] ~= nil and pw[2][1] ~= ftask.id and pw[2][2] == "__error__"
        and tostring(pw[2][3]):find("handler crash", 1, true) ~= nil, "the handler's error write")

-- Resume: handler should run again, NOT the original node
handler_should_fail = false
local result = graph:invoke(nil, config)
T.eq(result.foo, "recovered", "result")
T.eq(call_count.node, 1, "node NOT re-executed")
T.eq(call_count.handler, 2, "handler ran again on resume")
T.eq(captured_errors[2] and captured_errors[2].node, "fail", "error 2 node")
T.check(captured_errors[2] and tostring(captured_errors[2].error.message):find("boom", 1, true) ~= nil, "error 2 message")
T.finish()
