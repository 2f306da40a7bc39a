-- langgraph: test_pregel.py::test_multiple_interrupt_state_persistence
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{ steps = { reducer = sst.reducers.append, default = sst.array{} } }
builder:add_node("node", function()
  local first = sst.interrupt("First interrupt")
  local second = sst.interrupt("Second interrupt")
  return { steps = { first, second } }
end)
builder:add_edge(sst.START, "node")
local app = builder:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("1")

app:invoke({ steps = sst.array{} }, config)
T.eq(app:get_state(config).values, { steps = sst.array{} }, "after first interrupt")
app:invoke(sst.Command{ resume = "step1" }, config)
T.eq(app:get_state(config).values, { steps = sst.array{} }, "after second interrupt")
local result = app:invoke(sst.Command{ resume = "step2" }, config)
T.eq(result.steps, { "step1", "step2" }, "result")
T.eq(app:get_state(config).values.steps, { "step1", "step2" }, "state")
T.finish()
