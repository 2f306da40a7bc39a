-- langgraph: test_pregel.py::test_simple_multi_edge
-- The drawing snapshot is left out. `Annotated[str, operator.add]` is string
-- concatenation starting from "".
local sst = superstep
local T = require("checks")
local lg = require("lg")

local graph = sst.StateGraph{ my_key = { reducer = function(a, b) return a .. b end, default = "" } }
graph:add_node("up", function() end)
graph:add_node("side", function() end)
graph:add_node("other", function() return { my_key = "_more" } end)
graph:add_node("down", function() end)
graph:set_entry_point("up")
graph:add_edge("up", "side")
graph:add_edge("up", "other")
graph:add_edge({ "up", "side" }, "down")
graph:set_finish_point("down")
local app = graph:compile()

T.eq(app:invoke({ my_key = "my_value" }), { my_key = "my_value_more" }, "invoke")
local chunks = sst.json_encode(lg.collect(app:stream({ my_key = "my_value" }, nil, "updates")))
local a = sst.json_encode({ { up = sst.null }, { side = sst.null }, { other = { my_key = "_more" } }, { down = sst.null } })
local b = sst.json_encode({ { up = sst.null }, { other = { my_key = "_more" } }, { side = sst.null }, { down = sst.null } })
T.check(chunks == a or chunks == b, "stream: got " .. chunks)
T.finish()
