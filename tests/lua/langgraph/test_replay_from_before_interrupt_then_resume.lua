-- langgraph: test_time_travel.py::test_replay_from_before_interrupt_then_resume
local sst = superstep
local T = require("checks")
local lg = require("lg")

local has = lg.has

-- _checkpoint_summary, as (source, next, values) triples (newest first)
local function summary(history)
  local out = {}
  for i, s in ipairs(history) do out[i] = { s.metadata.source, s.next, s.values } end
  return out
end
local function source_next(history)
  local out = {}
  for i, s in ipairs(history) do out[i] = { s.metadata.source, s.next } end
  return out
end

local called = {}
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() called[#called + 1] = "node_a"; return { value = { "a" } } end)
g:add_node("ask_human", function()
  called[#called + 1] = "ask_human"
  local answer = sst.interrupt("What is your input?")
  return { value = { "human:" .. answer } }
end)
g:add_node("node_b", function() called[#called + 1] = "node_b"; return { value = { "b" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "ask_human")
g:add_edge("ask_human", "node_b")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local E = sst.array{}

-- original run: invoke until the interrupt, then resume to the end
graph:invoke({ value = sst.array{} }, config)
graph:invoke(sst.Command{ resume = "old_answer" }, config)

local original_history = graph:get_state_history(config)
T.eq(summary(original_history), {
  { "loop", E, { value = { "a", "human:old_answer", "b" } } },
  { "loop", { "node_b" }, { value = { "a", "human:old_answer" } } },
  { "loop", { "ask_human" }, { value = { "a" } } },
  { "loop", { "node_a" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "original history")

-- replay from the checkpoint before ask_human
local before_ask
for _, s in ipairs(original_history) do
  if sst.json_encode(s.next) == '["ask_human"]' then before_ask = s; break end
end

called = {}
local replay_result = graph:invoke(nil, before_ask.config)
T.eq(replay_result.__interrupt__[1].value, "What is your input?", "replay interrupt")
T.check(has(called, "ask_human"), "ask_human re-ran")
T.check(not has(called, "node_a"), "node_a not re-run")

-- a fork checkpoint is now the latest; it branches from the replay point
T.eq(source_next(graph:get_state_history(config)), {
  { "fork", { "ask_human" } },
  { "loop", E },
  { "loop", { "node_b" } },
  { "loop", { "ask_human" } },
  { "loop", { "node_a" } },
  { "input", { "__start__" } },
}, "history after the replay")

-- resume with a new answer
called = {}
local final_result = graph:invoke(sst.Command{ resume = "new_answer" }, config)
T.eq(final_result.value, { "a", "human:new_answer", "b" }, "final value")
T.check(has(called, "ask_human"), "ask_human ran")
T.check(has(called, "node_b"), "node_b ran")

T.eq(summary(graph:get_state_history(config)), {
  -- new branch (from the fork)
  { "loop", E, { value = { "a", "human:new_answer", "b" } } },
  { "loop", { "node_b" }, { value = { "a", "human:new_answer" } } },
  { "fork", { "ask_human" }, { value = { "a" } } },
  -- original branch (kept)
  { "loop", E, { value = { "a", "human:old_answer", "b" } } },
  { "loop", { "node_b" }, { value = { "a", "human:old_answer" } } },
  { "loop", { "ask_human" }, { value = { "a" } } },
  { "loop", { "node_a" }, { value = E } },
  { "input", { "__start__" }, { value = E } },
}, "final history")
T.finish()
