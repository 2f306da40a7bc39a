-- langgraph: test_pregel.py::test_supersteps_populate_task_results
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ num = sst.reducers.replace, text = sst.reducers.replace }
g:add_node("double", function(state) return { num = state.num * 2, text = state.text .. state.text } end)
g:add_edge(sst.START, "double")
g:add_edge("double", sst.END)
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local function first_task_result(history, node)
  for _, s in ipairs(history) do
    for _, t in ipairs(s.tasks or {}) do
      if t.name == node then return t.result end
    end
  end
  return nil
end

-- reference run with invoke
local ref_cfg = lg.thread("ref")
graph:invoke({ num = 1, text = "one" }, ref_cfg)
local ref_history = graph:get_state_history(ref_cfg)
local ref_start_result = first_task_result(ref_history, "__start__")
local ref_double_result = first_task_result(ref_history, "double")
T.eq(ref_start_result, { num = 1, text = "one" }, "ref __start__ result")
T.eq(ref_double_result, { num = 2, text = "oneone" }, "ref double result")

-- using supersteps
local bulk_cfg = lg.thread("bulk")
graph:bulk_update_state(bulk_cfg, {
  { { values = sst.object{}, as_node = "__input__" } },
  { { values = { num = 1, text = "one" }, as_node = "__start__" } },
  { { values = { num = 2, text = "oneone" }, as_node = "double" } },
})
local bulk_history = graph:get_state_history(bulk_cfg)
T.eq(first_task_result(bulk_history, "__start__"), { num = 1, text = "one" }, "bulk __start__ result")
T.eq(first_task_result(bulk_history, "double"), { num = 2, text = "oneone" }, "bulk double result")
T.finish()
