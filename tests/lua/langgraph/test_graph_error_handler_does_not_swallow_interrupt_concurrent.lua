-- langgraph: test_retry.py::test_graph_error_handler_does_not_swallow_interrupt_concurrent
-- error_handler=fn is the node option error_handler = function(state, error, ctx);
-- `error` is LangGraph's NodeError: { node = name, error = { code, message } }.
-- Python exceptions raised by nodes are plain Lua error()s.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ foo = sst.reducers.replace }
g:add_node("node_a", function(state)
  -- This node uses interrupt() which raises GraphInterrupt
  local val = sst.interrupt("need human input")
  return { foo = "a_" .. tostring(val) }
end, { error_handler = function(state) return { foo = "handled" } end })
g:add_node("node_b", function(state) return sst.object{} end)
-- Fan-out: both node_a and node_b run concurrently
g:add_edge(sst.START, "node_a")
g:add_edge(sst.START, "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("test-interrupt-concurrent")
-- First invoke should pause at the interrupt, not silently complete
graph:invoke({ foo = "" }, config)

-- The graph should have an interrupt pending
local state = graph:get_state(config)
T.check(#(state.tasks or {}) > 0, "tasks pending")
-- There should be a pending interrupt from node_a
local n = 0
for _, t in ipairs(state.tasks or {}) do
  if t.interrupts and #t.interrupts > 0 then n = n + 1 end
end
T.check(n > 0, "GraphInterrupt was swallowed — interrupt() in node_a should have paused execution")
T.finish()
