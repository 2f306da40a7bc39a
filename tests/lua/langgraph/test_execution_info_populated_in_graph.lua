-- langgraph: test_runtime.py::test_execution_info_populated_in_graph
-- runtime.execution_info is ctx.execution_info, a table with LangGraph's
-- fields (thread_id, task_id, checkpoint_id, checkpoint_ns, node_attempt,
-- node_first_attempt_time); it is copied while the node runs (ctx is valid
-- only then). server_info is left out (LangGraph Platform).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local captured = {}
local graph = sst.StateGraph{ message = sst.reducers.replace }
graph:add_node("capture", function(state, input, ctx)
  local info = ctx.execution_info
  captured.execution_info = info and sst.to_table(info) or false
  return { message = "done" }
end)
graph:add_edge(sst.START, "capture")
graph:add_edge("capture", sst.END)
local compiled = graph:compile{ checkpointer = sst.MemorySaver() }

compiled:invoke({ message = "hi" }, lg.thread("t-123"))
local info = captured.execution_info
T.check(type(info) == "table", "ctx.execution_info is set")
info = type(info) == "table" and info or {}
T.eq(info.thread_id, "t-123", "thread_id")
T.check(info.task_id ~= nil, "task_id is not None")
T.check(info.checkpoint_id ~= nil, "checkpoint_id is not None")
T.check(info.checkpoint_ns ~= nil, "checkpoint_ns is not None")
T.eq(info.node_attempt, 1, "node_attempt")
T.check(math.type(info.node_first_attempt_time) == "float", "node_first_attempt_time is a float")
T.finish()
