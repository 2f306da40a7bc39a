-- langgraph: test_pregel.py::test_conditional_state_graph_with_list_edge_inputs
-- The graph JSON and drawing snapshots are left out.
local sst = superstep
local T = require("checks")

local graph_builder = sst.StateGraph{ foo = { reducer = sst.reducers.append, default = sst.array{} } }
graph_builder:add_node("A", function() return { foo = { "A" } } end)
graph_builder:add_node("B", function() return { foo = { "B" } } end)
graph_builder:add_edge(sst.START, "A")
graph_builder:add_edge(sst.START, "B")
graph_builder:add_edge({ "A", "B" }, sst.END)
local app = graph_builder:compile()
T.eq(app:invoke({ foo = sst.array{} }), { foo = { "A", "B" } }, "invoke")
T.finish()
