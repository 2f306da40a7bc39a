-- langgraph: test_pregel.py::test_concurrent_emit_sends
-- StateGraph(Annotated[list, operator.add]) is a root state: written here as
-- sst.StateGraph(<reducer>) (no README mapping yet). Python's node tells a
-- Send payload from the state by its type; here the payload is `input`.
local sst = superstep
local T = require("checks")

local function Node(name)
  return name, function(state, input)
    if input == nil then return { name } end
    return { name .. "|" .. tostring(input) }
  end
end

local builder = sst.StateGraph(sst.reducers.append)
builder:add_node(Node("1"))
builder:add_node(Node("1.1"))
builder:add_node(Node("2"))
builder:add_node(Node("3"))
builder:add_node(Node("3.1"))
builder:add_edge(sst.START, "1")
builder:add_edge(sst.START, "1.1")
builder:add_conditional_edges("1", function() return { sst.Send("2", 1), sst.Send("2", 2), "3.1" } end)
builder:add_conditional_edges("1.1", function() return { sst.Send("2", 3), sst.Send("2", 4) } end)
-- route_to_three -> Literal["3"]: the path map is the Literal
builder:add_conditional_edges("2", function() return "3" end, { "3" })
local graph = builder:compile()
T.eq(graph:invoke({ "0" }), { "0", "1", "1.1", "3.1", "2|1", "2|2", "2|3", "2|4", "3" }, "invoke")
T.finish()
