-- langgraph: test_pregel.py::test_run_from_checkpoint_id_retains_previous_writes
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{
  myval = { reducer = sst.reducers.sum, default = 0 },
  otherval = sst.reducers.replace,
}
-- one callable shared by both nodes (Python's Anode instance)
local switch = false
local function thenode()
  switch = not switch
  return { myval = switch and 2 or 1, otherval = switch }
end
builder:add_node("node_one", thenode)
builder:add_node("node_two", thenode)
builder:add_edge(sst.START, "node_one")

local function getedge(src)
  local swap = src == "node_two" and "node_one" or "node_two"
  return function(st)
    if st.myval > 3 then return sst.END end
    if st.otherval then return swap end
    return src
  end
end
builder:add_conditional_edges("node_one", getedge("node_one"))
builder:add_conditional_edges("node_two", getedge("node_two"))
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local thread_id = "5c3f7b0e-run-from-checkpoint"
local thread1 = lg.thread(thread_id)

local result = graph:invoke({ myval = 1 }, thread1, { durability = "async" })
T.eq(result.myval, 4, "result myval")
local history = graph:get_state_history(thread1)
T.eq(#history, 4, "history length")
T.eq(history[#history].values, { myval = 0 }, "oldest values")
T.eq(history[1].values, { myval = 4, otherval = false }, "newest values")

local second_run_config = lg.thread(thread_id, history[2].config.configurable.checkpoint_id)
local second_result = graph:invoke(nil, second_run_config)
T.eq(second_result, { myval = 5, otherval = true }, "second result")

local new_history = graph:get_state_history({ configurable = { thread_id = thread_id, checkpoint_ns = "" } })
-- +2: one fork checkpoint from time travel, one from the new execution
T.eq(#new_history, #history + 2, "new history length")
T.eq(new_history[2] and new_history[2].metadata.source, "fork", "fork source")
for i, original in ipairs(history) do
  local new = new_history[i + 2] or {}
  T.eq(new.values, original.values, "values " .. i)
  T.eq(new.next, original.next, "next " .. i)
  T.eq(new.metadata and new.metadata.step, original.metadata.step, "step " .. i)
  T.eq(new.tasks, original.tasks, "tasks " .. i)
end
T.finish()
