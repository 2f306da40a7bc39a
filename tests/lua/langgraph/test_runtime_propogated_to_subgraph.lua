-- langgraph: test_runtime.py::test_runtime_propogated_to_subgraph
-- The dataclass Context(username) is a plain table, context_schema = { "username" };
-- runtime.context is ctx.context.
local sst = superstep
local T = require("checks")

local subgraph_builder = sst.StateGraph({ subgraph = sst.reducers.replace, main = sst.reducers.replace },
                                        { context_schema = { "username" } })
subgraph_builder:add_node("subgraph_node_1", function(state, input, ctx)
  return { subgraph = ctx.context.username .. "!" }
end)
subgraph_builder:set_entry_point("subgraph_node_1")
local subgraph = subgraph_builder:compile()

local builder = sst.StateGraph({ subgraph = sst.reducers.replace, main = sst.reducers.replace },
                               { context_schema = { "username" } })
builder:add_node("main_node", function(state, input, ctx) return { main = ctx.context.username .. "!" } end)
builder:add_node("node_1", subgraph)
builder:set_entry_point("main_node")
builder:add_edge("main_node", "node_1")
local graph = builder:compile()

local context = { username = "Alice" }
local result = graph:invoke({}, nil, { context = context })
T.eq(result, { subgraph = "Alice!", main = "Alice!" }, "invoke")
T.finish()
