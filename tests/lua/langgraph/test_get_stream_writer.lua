-- langgraph: test_pregel.py::test_get_stream_writer
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("my_node", function(state, input, ctx)
  ctx.emit("custom!")
  return state
end)
g:add_edge(sst.START, "my_node")
local graph = g:compile()

T.eq(lg.collect(graph:stream({ foo = "bar" }, nil, "custom")), { "custom!" }, "custom")
T.eq(lg.collect(graph:stream({ foo = "bar" }, nil, "values")), { { foo = "bar" }, { foo = "bar" } },
     "values")
T.eq(lg.collect(graph:stream({ foo = "bar" }, nil, { "custom", "updates" })),
     { { "custom", "custom!" }, { "updates", { my_node = { foo = "bar" } } } }, "custom+updates")
T.finish()
