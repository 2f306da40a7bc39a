-- langgraph: test_pregel.py::test_in_one_fan_out_state_graph_waiting_edge
-- The drawing snapshot and debug=1 are left out. time.sleep in retriever_two
-- only orders Python's stream; it is left out. sorted_add's (remove, add)
-- tuple form is never used by the test and is left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sorted_add = lg.sorted_add

local workflow = sst.StateGraph{
  query = sst.reducers.replace,
  answer = sst.reducers.replace,
  docs = { reducer = sorted_add, default = sst.array{} },
}
workflow:add_node("rewrite_query", function(data) return { query = "query: " .. data.query } end)
workflow:add_node("analyzer_one", function(data) return { query = "analyzed: " .. data.query } end)
workflow:add_node("retriever_one", function() return { docs = { "doc1", "doc2" } } end)
workflow:add_node("retriever_two", function() return { docs = { "doc3", "doc4" } } end)
workflow:add_node("qa", function(data) return { answer = table.concat(sst.to_table(data.docs), ",") } end)
workflow:set_entry_point("rewrite_query")
workflow:add_edge("rewrite_query", "analyzer_one")
workflow:add_edge("analyzer_one", "retriever_one")
workflow:add_edge("rewrite_query", "retriever_two")
workflow:add_edge({ "retriever_one", "retriever_two" }, "qa")
workflow:set_finish_point("qa")

local app = workflow:compile()
T.eq(app:invoke({ query = "what is weather in sf" }), {
  query = "analyzed: query: what is weather in sf",
  docs = { "doc1", "doc2", "doc3", "doc4" },
  answer = "doc1,doc2,doc3,doc4",
}, "invoke")

local first_four = {
  { rewrite_query = { query = "query: what is weather in sf" } },
  { analyzer_one = { query = "analyzed: query: what is weather in sf" } },
  { retriever_two = { docs = { "doc3", "doc4" } } },
  { retriever_one = { docs = { "doc1", "doc2" } } },
}
local function with(list, extra)
  local out = {}
  for i, v in ipairs(list) do out[i] = v end
  out[#out + 1] = extra
  return out
end

T.eq(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "updates")),
     with(first_four, { qa = { answer = "doc1,doc2,doc3,doc4" } }), "stream")

local checkpointer = sst.MemorySaver()
local app_w_interrupt = workflow:compile{ checkpointer = checkpointer, interrupt_after = { "retriever_one" } }
local config = lg.thread("1")
T.eq(lg.collect(app_w_interrupt:stream({ query = "what is weather in sf" }, config, "updates")),
     with(first_four, { __interrupt__ = sst.array{} }), "interrupt_after stream")
T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")),
     { { qa = { answer = "doc1,doc2,doc3,doc4" } } }, "interrupt_after resume")

app_w_interrupt = workflow:compile{ checkpointer = checkpointer, interrupt_before = { "qa" } }
config = lg.thread("2")
T.eq(lg.collect(app_w_interrupt:stream({ query = "what is weather in sf" }, config, "updates")),
     with(first_four, { __interrupt__ = sst.array{} }), "interrupt_before stream")

app_w_interrupt:update_state(config, { docs = { "doc5" } })
local expected_parent_config = app_w_interrupt:get_state_history(config, { limit = 2 })[2].config
local state = app_w_interrupt:get_state(config)
T.eq(state.values, { query = "analyzed: query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4", "doc5" } },
     "state values")
T.eq(#state.tasks, 1, "state task count")
local task = state.tasks[1] or {}
T.check(lg.any_str(task.id), "task id")
T.eq({ name = task.name, path = task.path, error = task.error, interrupts = task.interrupts, state = task.state,
       result = task.result },
     { name = "qa", path = { "__pregel_pull", "qa" }, interrupts = sst.array{} }, "state task")
T.eq(state.next, { "qa" }, "state next")
local cfg = state.config and state.config.configurable or {}
T.eq({ cfg.thread_id, cfg.checkpoint_ns }, { "2", "" }, "state config")
T.check(lg.any_str(cfg.checkpoint_id), "state checkpoint_id")
T.check(lg.any_str(state.created_at), "state created_at")
T.eq(state.metadata, { parents = sst.object{}, source = "update", step = 4 }, "state metadata")
T.eq(state.parent_config, expected_parent_config, "state parent_config")
T.check(expected_parent_config ~= nil, "expected parent config")
T.eq(state.interrupts, sst.array{}, "state interrupts")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")),
     { { qa = { answer = "doc1,doc2,doc3,doc4,doc5" } } }, "resume after update")
T.finish()
