-- langgraph: test_pregel.py::test_debug_subgraphs
-- The durability parameter is a loop (a fresh MemorySaver each time). Debug
-- events have LangGraph's shape { type = "checkpoint", payload = { config,
-- parent_config, values, next, tasks } }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function node(name)
  return function() return { messages = { "entered " .. name .. " node" } } end
end
local function State() return sst.StateGraph{ messages = { reducer = sst.reducers.append, default = sst.array{} } } end
local function lax_normalize_config(c)
  if c == nil or c == sst.null then return nil end -- a payload's JSON null is sst.null
  return c.configurable
end

for _, durability in ipairs({ "sync", "async", "exit" }) do
  local what = durability .. ": "
  local child = State()
  child:add_node("c_one", node("c_one"))
  child:add_node("c_two", node("c_two"))
  child:add_edge(sst.START, "c_one")
  child:add_edge("c_one", "c_two")
  child:add_edge("c_two", sst.END)

  local parent = State()
  parent:add_node("p_one", node("p_one"))
  parent:add_node("p_two", child:compile())
  parent:add_edge(sst.START, "p_one")
  parent:add_edge("p_one", "p_two")
  parent:add_edge("p_two", sst.END)
  local graph = parent:compile{ checkpointer = sst.MemorySaver() }

  local config = lg.thread("1")
  local events = lg.collect(graph:stream({ messages = sst.array{} }, config, "debug", { durability = durability }))
  local checkpoint_events = {}
  for i = #events, 1, -1 do
    if events[i].type == "checkpoint" then checkpoint_events[#checkpoint_events + 1] = events[i].payload end
  end
  if durability == "exit" then checkpoint_events = { checkpoint_events[1] } end
  local checkpoint_history = graph:get_state_history(config)
  T.eq(#checkpoint_events, #checkpoint_history, what .. "count")

  for i = 1, math.min(#checkpoint_events, #checkpoint_history) do
    local stream, history = checkpoint_events[i], checkpoint_history[i]
    local w = what .. "checkpoint " .. i .. ": "
    T.eq(stream.values, history.values, w .. "values")
    T.eq(stream.next, history.next, w .. "next")
    T.eq(lax_normalize_config(stream.config), lax_normalize_config(history.config), w .. "config")
    T.eq(lax_normalize_config(stream.parent_config), lax_normalize_config(history.parent_config), w .. "parent_config")
    T.eq(#stream.tasks, #history.tasks, w .. "task count")
    for j = 1, math.min(#stream.tasks, #history.tasks) do
      local st, ht = stream.tasks[j], history.tasks[j]
      T.eq(st.id, ht.id, w .. "task id")
      T.eq(st.name, ht.name, w .. "task name")
      T.eq(st.interrupts, ht.interrupts, w .. "task interrupts")
      T.eq(st.error, ht.error, w .. "task error")
      T.eq(st.state, ht.state, w .. "task state")
    end
  end
end
T.finish()
