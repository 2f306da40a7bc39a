-- langgraph: test_runtime.py::test_execution_info_inherited_by_subgraph
-- runtime.execution_info is ctx.execution_info (see
-- test_execution_info_populated_in_graph.lua), copied while the node runs.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local captured_main, captured_sub = {}, {}

local subgraph_builder = sst.StateGraph{ message = sst.reducers.replace }
subgraph_builder:add_node("sub_node", function(state, input, ctx)
  captured_sub.execution_info = sst.to_table(ctx.execution_info)
  return { message = "from_sub" }
end)
subgraph_builder:add_edge(sst.START, "sub_node")
local subgraph = subgraph_builder:compile()

local builder = sst.StateGraph{ message = sst.reducers.replace }
builder:add_node("main_node", function(state, input, ctx)
  captured_main.execution_info = sst.to_table(ctx.execution_info)
  return { message = "from_main" }
end)
builder:add_node("subgraph", subgraph)
builder:add_edge(sst.START, "main_node")
builder:add_edge("main_node", "subgraph")
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

graph:invoke({ message = "hi" }, lg.thread("sub-thread"))

local main_info = captured_main.execution_info
local sub_info = captured_sub.execution_info

-- Both share the same thread_id
T.eq(main_info.thread_id, "sub-thread", "main thread_id")
T.eq(sub_info.thread_id, "sub-thread", "sub thread_id")

-- Both have node_attempt = 1
T.eq(main_info.node_attempt, 1, "main node_attempt")
T.eq(sub_info.node_attempt, 1, "sub node_attempt")

-- Main namespace is "main_node:<task_id>" (top-level, no separator)
T.check(main_info.checkpoint_ns:sub(1, 10) == "main_node:", "main checkpoint_ns prefix")
T.check(not main_info.checkpoint_ns:find("|", 1, true), "main checkpoint_ns has no |")

-- Subgraph namespace is "subgraph:<task_id>|sub_node:<task_id>" (nested)
T.check(sub_info.checkpoint_ns:sub(1, 9) == "subgraph:", "sub checkpoint_ns prefix")
T.check(sub_info.checkpoint_ns:find("|sub_node:", 1, true) ~= nil, "sub checkpoint_ns nested")

-- task_id appears in its own namespace segment
T.check(main_info.checkpoint_ns:find(main_info.task_id, 1, true) ~= nil, "main task_id in ns")
T.check(sub_info.checkpoint_ns:find(sub_info.task_id, 1, true) ~= nil, "sub task_id in ns")
T.finish()
