-- langgraph: test_retry.py::test_graph_error_handler_handles_subgraph_internal_failure
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s. isinstance(
-- error.error, BaseException) is checked as an error object whose message is
-- the one raised inside the subgraph (Python's str(error.error)), not the
-- child run's "vertex 'sub_fail_node' failed ...".
local sst = superstep
local T = require("checks")
local lg = require("lg")

local parent_handler_called = false
local captured = {}

local sb = sst.StateGraph{ foo = sst.reducers.replace }
sb:add_node("sub_fail_node", function(state) error("subgraph boom", 0) end)
sb:add_edge(sst.START, "sub_fail_node")
local subgraph = sb:compile()

local pg = sst.StateGraph{ foo = sst.reducers.replace }
pg:add_node("subgraph_node", subgraph, { error_handler = function(state, err)
  parent_handler_called = true
  captured.from_node_name = err.node
  captured.from_node_error = err.error
  return { foo = "handled_by_parent" }
end })
pg:add_edge(sst.START, "subgraph_node")
local parent_graph = pg:compile()

local result = parent_graph:invoke({ foo = "" })
T.eq(result.foo, "handled_by_parent", "result")
T.eq(parent_handler_called, true, "parent handler called")
T.eq(captured.from_node_name, "subgraph_node", "error.node")
T.check(type(captured.from_node_error) == "table" and captured.from_node_error.code ~= nil, "error.error is an error")
T.eq(captured.from_node_error and tostring(captured.from_node_error), "subgraph boom", "str(error.error)")
T.eq(captured.from_node_error and captured.from_node_error.message, "subgraph boom", "error.error.message")
T.finish()
