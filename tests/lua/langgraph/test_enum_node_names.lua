-- langgraph: test_pregel.py::test_enum_node_names
-- Python's str-Enum member NodeName.BAZ is its string value "baz".
local sst = superstep
local T = require("checks")

local NodeName = { BAZ = "baz" }
local graph = sst.StateGraph{ foo = sst.reducers.replace, bar = sst.reducers.replace }
graph:add_node(NodeName.BAZ, function(state) return { bar = state.foo .. "!" } end)
graph:add_edge(sst.START, NodeName.BAZ)
graph:add_edge(NodeName.BAZ, sst.END)
local app = graph:compile()
T.eq(app:invoke({ foo = "hello" }), { foo = "hello", bar = "hello!" }, "invoke")
T.finish()
