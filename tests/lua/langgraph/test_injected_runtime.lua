-- langgraph: test_runtime.py::test_injected_runtime
-- The dataclass Context(api_key) is a plain table, declared as
-- context_schema = { "api_key" }; runtime.context is ctx.context.
local sst = superstep
local T = require("checks")

local graph = sst.StateGraph({ message = sst.reducers.replace }, { context_schema = { "api_key" } })
graph:add_node("injected_runtime", function(state, input, ctx)
  return { message = "api key: " .. ctx.context.api_key }
end)
graph:add_edge(sst.START, "injected_runtime")
graph:add_edge("injected_runtime", sst.END)
local compiled = graph:compile()
local result = compiled:invoke({ message = "hello world" }, nil, { context = { api_key = "sk_123456" } })
T.eq(result, { message = "api key: sk_123456" }, "invoke")
T.finish()
