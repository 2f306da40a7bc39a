-- langgraph: test_pregel.py::test_cond_edge_after_send
-- StateGraph(Annotated[list, operator.add]) is a root state: written here as
-- sst.StateGraph(<reducer>) (no README mapping yet). The node is reached by
-- Send, so it returns its name whatever its input.
local sst = superstep
local T = require("checks")

local function Node(name) return name, function() return { name } end end

local builder = sst.StateGraph(sst.reducers.append)
builder:add_node(Node("1"))
builder:add_node(Node("2"))
builder:add_node(Node("3"))
builder:add_edge(sst.START, "1")
builder:add_conditional_edges("1", function(state) return { sst.Send("2", state), sst.Send("2", state) } end)
-- route_to_three -> Literal["3"]: the path map is the Literal
builder:add_conditional_edges("2", function() return "3" end, { "3" })
local graph = builder:compile()
T.eq(graph:invoke({ "0" }), { "0", "1", "2", "2", "3" }, "invoke")
T.finish()
