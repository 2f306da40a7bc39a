-- langgraph: test_pregel.py::test_conditional_entrypoint_to_multiple_state_graph
-- The JSON-schema, graph JSON and drawing snapshots are left out, and so is
-- debug=True. Python's get_weather receives the Send payload as its state;
-- here it is the node's `input`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local workflow = sst.StateGraph{
  locations = sst.reducers.replace,
  results = { reducer = sst.reducers.append, default = sst.array{} },
}
workflow:add_node("get_weather", function(state, input)
  local location = input.location
  local weather = #location > 2 and "sunny" or "cloudy"
  return { results = { "It's " .. weather .. " in " .. location } }
end)
workflow:add_edge("get_weather", sst.END)
workflow:set_conditional_entry_point(function(state)
  local sends = {}
  for _, location in ipairs(state.locations) do sends[#sends + 1] = sst.Send("get_weather", { location = location }) end
  return sends
end, { "get_weather" })
local app = workflow:compile()

local expected = { locations = { "sf", "nyc" }, results = { "It's cloudy in sf", "It's sunny in nyc" } }
T.eq(app:invoke({ locations = { "sf", "nyc" } }), expected, "invoke")
local values = lg.collect(app:stream({ locations = { "sf", "nyc" } }, nil, "values"))
T.eq(values[#values], expected, "last values chunk")
T.finish()
