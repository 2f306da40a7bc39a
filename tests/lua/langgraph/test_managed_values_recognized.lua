-- langgraph: test_managed_values.py::test_managed_values_recognized
-- Python checks that a `remaining_steps: RemainingSteps` key (plain,
-- NotRequired or Required, which are type-hint variants and one case here) is
-- a managed value (graph.managed), not a state channel. Superstep has no
-- managed keys in a schema: RemainingSteps/IsLastStep are ctx.remaining_steps
-- and ctx.is_last_step, so the port checks that a node gets them and that no
-- `remaining_steps` key appears in the state.
local sst = superstep
local T = require("checks")

local seen = {}
local graph = sst.StateGraph{ value = sst.reducers.replace }
graph:add_node("node", function(state, input, ctx)
  seen.remaining_steps = ctx.remaining_steps
  seen.is_last_step = ctx.is_last_step
  return { value = 1 }
end)
graph:add_edge(sst.START, "node")
local result = graph:compile():invoke({ value = 0 })
T.check(math.type(seen.remaining_steps) == "integer", "ctx.remaining_steps is an integer")
T.eq(seen.is_last_step, false, "ctx.is_last_step")
T.eq(result, { value = 1 }, "remaining_steps is not a state key")
T.finish()
