-- langgraph: test_runtime.py::test_context_coercion_typeddict
-- The TypedDict Context is context_schema = { "api_key", "timeout" }.
local sst = superstep
local T = require("checks")

local graph = sst.StateGraph({ message = sst.reducers.replace }, { context_schema = { "api_key", "timeout" } })
graph:add_node("node", function(state, input, ctx)
  -- TypedDict context is just a dict at runtime
  return { message = string.format("api_key: %s, timeout: %s", ctx.context.api_key, ctx.context.timeout) }
end)
graph:add_edge(sst.START, "node")
graph:add_edge("node", sst.END)
local compiled = graph:compile()

-- Test dict passes through for TypedDict
local result = compiled:invoke({ message = "test" }, nil, { context = { api_key = "sk_test", timeout = 60 } })
T.eq(result, { message = "api_key: sk_test, timeout: 60" }, "invoke")
T.finish()
