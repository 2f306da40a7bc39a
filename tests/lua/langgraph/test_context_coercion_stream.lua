-- langgraph: test_runtime.py::test_context_coercion_stream
-- The dataclass Context(api_key, stream_mode="default") is a plain table
-- (the test gives every field), context_schema = { "api_key", "stream_mode" }.
local sst = superstep
local T = require("checks")

local graph = sst.StateGraph({ message = sst.reducers.replace }, { context_schema = { "api_key", "stream_mode" } })
graph:add_node("node", function(state, input, ctx)
  return { message = string.format("stream api_key: %s, mode: %s", ctx.context.api_key, ctx.context.stream_mode) }
end)
graph:add_edge(sst.START, "node")
graph:add_edge("node", sst.END)
local compiled = graph:compile()

-- Test dict coercion with stream
local chunks = {}
for chunk in compiled:stream({ message = "test" }, nil, "updates",
                             { context = { api_key = "sk_stream", stream_mode = "fast" } }) do
  chunks[#chunks + 1] = chunk
end

-- Find the chunk with our node output
local node_output = nil
for _, chunk in ipairs(chunks) do
  if chunk.node ~= nil then
    node_output = chunk.node
    break
  end
end
T.eq(node_output, { message = "stream api_key: sk_stream, mode: fast" }, "node output")
T.finish()
