-- langgraph: test_runtime.py::test_context_runtime
-- get_runtime(Context) inside a node is the node's ctx (as the README maps
-- get_stream_writer() to ctx.emit); runtime.context is ctx.context. The
-- dataclass Context(api_key) is a plain table, context_schema = { "api_key" }.
local sst = superstep
local T = require("checks")

local graph = sst.StateGraph({ message = sst.reducers.replace }, { context_schema = { "api_key" } })
graph:add_node("context_runtime", function(state, input, ctx)
  local runtime = ctx
  return { message = "api key: " .. runtime.context.api_key }
end)
graph:add_edge(sst.START, "context_runtime")
graph:add_edge("context_runtime", sst.END)
local compiled = graph:compile()
local result = compiled:invoke({ message = "hello world" }, nil, { context = { api_key = "sk_123456" } })
T.eq(result, { message = "api key: sk_123456" }, "invoke")
T.finish()
