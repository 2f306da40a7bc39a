-- langgraph: test_pregel.py::test_null_resume_disallowed_with_multiple_interrupts
-- RuntimeError has no LangGraph kind in lg.lua: the message is checked.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ text_1 = sst.reducers.replace, text_2 = sst.reducers.replace }
g:add_node("human_node_1", function(state)
  return { text_1 = sst.interrupt({ text_to_revise = state.text_1 }) }
end)
g:add_node("human_node_2", function(state)
  return { text_2 = sst.interrupt({ text_to_revise = state.text_2 }) }
end)
-- Add both nodes in parallel from START
g:add_edge(sst.START, "human_node_1")
g:add_edge(sst.START, "human_node_2")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("multi-" .. tostring(os.time()))
graph:invoke({ text_1 = "original text 1", text_2 = "original text 2" }, config)

local resume_map = {}
for _, i in ipairs(graph:get_state(config).interrupts or {}) do
  resume_map[i.id] = "resume for prompt: " .. i.value.text_to_revise
end
T.raises(function() graph:invoke(sst.Command{ resume = "singular resume" }, config) end,
         "When there are multiple pending interrupts, you must specify the interrupt id when resuming.",
         "null resume with two interrupts")

T.eq(graph:invoke(sst.Command{ resume = resume_map }, config), {
  text_1 = "resume for prompt: original text 1",
  text_2 = "resume for prompt: original text 2",
}, "resume by id")
T.finish()
