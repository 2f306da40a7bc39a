-- langgraph: test_runtime.py::test_context_coercion_none
-- The dataclass Context(api_key) is context_schema = { "api_key" }.
local sst = superstep
local T = require("checks")

local graph = sst.StateGraph({ message = sst.reducers.replace }, { context_schema = { "api_key" } })
graph:add_node("node", function(state, input, ctx)
  -- Should be None when no context provided
  return { message = "context is None: " .. (ctx.context == nil and "True" or "False") }
end)
graph:add_edge(sst.START, "node")
graph:add_edge("node", sst.END)
local compiled = graph:compile()

-- Test with None context
local result = compiled:invoke({ message = "test" }, nil, { context = nil })
T.eq(result, { message = "context is None: True" }, "context = None")

-- Test without context parameter (defaults to None)
result = compiled:invoke({ message = "test" })
T.eq(result, { message = "context is None: True" }, "no context")
T.finish()
