-- langgraph: test_pregel.py::test_in_one_fan_out_state_graph_defer_node
-- Parametrized on use_waiting_edge: a loop over both. The drawing snapshot
-- and debug=1 are left out; time.sleep in retriever_two only orders
-- Python's stream and is left out. In the "debug" chunks, timestamp and
-- payload.id are checked as non-empty strings and payload.triggers (Python's
-- channel names, e.g. "branch:to:qa") is left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sorted_add = lg.sorted_add

local function with(list, extra)
  local out = {}
  for i, v in ipairs(list) do out[i] = v end
  out[#out + 1] = extra
  return out
end

local function task(step, name, input)
  return { type = "task", step = step, payload = { name = name, input = input } }
end
local function task_result(step, name, result)
  return { type = "task_result", step = step,
           payload = { name = name, error = sst.null, result = result, interrupts = sst.array{} } }
end

for _, use_waiting_edge in ipairs({ true, false }) do
  local what = "[use_waiting_edge=" .. tostring(use_waiting_edge) .. "] "
  local workflow = sst.StateGraph{
    query = sst.reducers.replace,
    answer = sst.reducers.replace,
    docs = { reducer = sorted_add, default = sst.array{} },
  }
  workflow:add_node("rewrite_query", function(data) return { query = "query: " .. data.query } end)
  workflow:add_node("analyzer_one", function(data) return { query = "analyzed: " .. data.query } end)
  workflow:add_node("retriever_one", function() return { docs = { "doc1", "doc2" } } end)
  workflow:add_node("retriever_two", function() return { docs = { "doc3", "doc4" } } end)
  workflow:add_node("qa", function(data) return { answer = table.concat(sst.to_table(data.docs), ",") } end,
                    { defer = true })
  workflow:set_entry_point("rewrite_query")
  workflow:add_edge("rewrite_query", "retriever_one")
  workflow:add_edge("retriever_one", "analyzer_one")
  workflow:add_edge("rewrite_query", "retriever_two")
  if use_waiting_edge then
    workflow:add_edge({ "retriever_one", "retriever_two" }, "qa")
  else
    workflow:add_edge("retriever_one", "qa")
    workflow:add_edge("retriever_two", "qa")
  end
  workflow:set_finish_point("qa")

  local app = workflow:compile()
  T.eq(app:invoke({ query = "what is weather in sf" }), {
    query = "analyzed: query: what is weather in sf",
    docs = { "doc1", "doc2", "doc3", "doc4" },
    answer = "doc1,doc2,doc3,doc4",
  }, what .. "invoke")

  local first_four = {
    { rewrite_query = { query = "query: what is weather in sf" } },
    { retriever_one = { docs = { "doc1", "doc2" } } },
    { retriever_two = { docs = { "doc3", "doc4" } } },
    { analyzer_one = { query = "analyzed: query: what is weather in sf" } },
  }
  T.eq(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "updates")),
       with(first_four, { qa = { answer = "doc1,doc2,doc3,doc4" } }), what .. "stream")

  local debug = {}
  for _, ev in ipairs(lg.collect(app:stream({ query = "what is weather in sf" }, nil, "debug"))) do
    local e = sst.to_table(ev)
    T.check(lg.any_str(e.timestamp), what .. "debug timestamp")
    T.check(type(e.payload) == "table" and lg.any_str(e.payload.id), what .. "debug payload id")
    e.timestamp = nil
    if type(e.payload) == "table" then e.payload.id = nil; e.payload.triggers = nil end
    debug[#debug + 1] = e
  end
  local q0 = { query = "query: what is weather in sf", docs = sst.array{} }
  local q1 = { query = "query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4" } }
  local q2 = { query = "analyzed: query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4" } }
  T.eq(debug, {
    task(1, "rewrite_query", { query = "what is weather in sf", docs = sst.array{} }),
    task_result(1, "rewrite_query", { query = "query: what is weather in sf" }),
    task(2, "retriever_one", q0),
    task(2, "retriever_two", q0),
    task_result(2, "retriever_one", { docs = { "doc1", "doc2" } }),
    task_result(2, "retriever_two", { docs = { "doc3", "doc4" } }),
    task(3, "analyzer_one", q1),
    task_result(3, "analyzer_one", { query = "analyzed: query: what is weather in sf" }),
    task(4, "qa", q2),
    task_result(4, "qa", { answer = "doc1,doc2,doc3,doc4" }),
  }, what .. "debug stream")

  local checkpointer = sst.MemorySaver()
  local app_w_interrupt = workflow:compile{ checkpointer = checkpointer, interrupt_after = { "analyzer_one" } }
  local config = lg.thread("1")
  T.eq(lg.collect(app_w_interrupt:stream({ query = "what is weather in sf" }, config, "updates")),
       with(first_four, { __interrupt__ = sst.array{} }), what .. "interrupt_after stream")
  T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")),
       { { qa = { answer = "doc1,doc2,doc3,doc4" } } }, what .. "interrupt_after resume")

  app_w_interrupt = workflow:compile{ checkpointer = checkpointer, interrupt_before = { "qa" } }
  config = lg.thread("2")
  T.eq(lg.collect(app_w_interrupt:stream({ query = "what is weather in sf" }, config, "updates")),
       with(first_four, { __interrupt__ = sst.array{} }), what .. "interrupt_before stream")

  app_w_interrupt:update_state(config, { docs = { "doc5" } })
  local expected_parent_config = app_w_interrupt:get_state_history(config, { limit = 2 })[2].config
  local state = app_w_interrupt:get_state(config)
  T.eq(state.values, { query = "analyzed: query: what is weather in sf", docs = { "doc1", "doc2", "doc3", "doc4", "doc5" } },
       what .. "state values")
  T.eq(#state.tasks, 1, what .. "state task count")
  local t = state.tasks[1] or {}
  T.check(lg.any_str(t.id), what .. "task id")
  T.eq({ name = t.name, path = t.path, error = t.error, interrupts = t.interrupts, state = t.state, result = t.result },
       { name = "qa", path = { "__pregel_pull", "qa" }, interrupts = sst.array{} }, what .. "state task")
  T.eq(state.next, { "qa" }, what .. "state next")
  local cfg = state.config and state.config.configurable or {}
  T.eq({ cfg.thread_id, cfg.checkpoint_ns }, { "2", "" }, what .. "state config")
  T.check(lg.any_str(cfg.checkpoint_id), what .. "state checkpoint_id")
  T.check(lg.any_str(state.created_at), what .. "state created_at")
  T.eq(state.metadata, { parents = sst.object{}, source = "update", step = 4 }, what .. "state metadata")
  T.check(expected_parent_config ~= nil, what .. "expected parent config")
  T.eq(state.parent_config, expected_parent_config, what .. "state parent_config")
  T.eq(state.interrupts, sst.array{}, what .. "state interrupts")

  T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")),
       { { qa = { answer = "doc1,doc2,doc3,doc4,doc5" } } }, what .. "resume after update")
end
T.finish()
