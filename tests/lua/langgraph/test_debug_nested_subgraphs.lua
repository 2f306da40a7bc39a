-- langgraph: test_pregel.py::test_debug_nested_subgraphs
-- The durability parameter is a loop (a fresh MemorySaver each time).
-- `stream(..., subgraphs=True)` yields `namespace, event` (the namespace as a
-- list); a namespace's history is read with `checkpoint_ns` = the namespace
-- joined with "|".
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function node(name)
  return function() return { messages = { "entered " .. name .. " node" } } end
end
local function State() return sst.StateGraph{ messages = { reducer = sst.reducers.append, default = sst.array{} } } end
local function normalize_config(c)
  if c == nil or c == sst.null then return nil end -- a payload's JSON null is sst.null
  local cc = c.configurable
  return { thread_id = cc.thread_id, checkpoint_id = cc.checkpoint_id, checkpoint_ns = cc.checkpoint_ns,
           checkpoint_map = cc.checkpoint_map }
end
local function starts(s, p) return type(s) == "string" and s:sub(1, #p) == p end

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

  local grand_parent = State()
  grand_parent:add_node("gp_one", node("gp_one"))
  grand_parent:add_node("gp_two", parent:compile())
  grand_parent:add_edge(sst.START, "gp_one")
  grand_parent:add_edge("gp_one", "gp_two")
  grand_parent:add_edge("gp_two", sst.END)
  local graph = grand_parent:compile{ checkpointer = sst.MemorySaver() }

  local config = lg.thread("1")
  local keys, stream_ns = {}, {}
  for ns, e in graph:stream({ messages = sst.array{} }, config, "debug", { subgraphs = true, durability = durability }) do
    if e.type == "checkpoint" then
      local key = table.concat(ns, "|")
      if stream_ns[key] == nil then
        stream_ns[key] = {}
        keys[#keys + 1] = ns
      end
      table.insert(stream_ns[key], e.payload)
    end
  end

  T.eq(#keys, 3, what .. "namespaces")
  T.eq(keys[1], sst.array{}, what .. "root namespace")
  T.check(keys[2] and #keys[2] == 1 and starts(keys[2][1], "gp_two:"), what .. "namespace 2")
  T.check(keys[3] and #keys[3] == 2 and starts(keys[3][1], "gp_two:") and starts(keys[3][2], "p_two:"),
          what .. "namespace 3")

  for _, ns in ipairs(keys) do
    local key = table.concat(ns, "|")
    local w = what .. "ns '" .. key .. "': "
    local h = graph:get_state_history({ configurable = { thread_id = "1", checkpoint_ns = key } })
    local checkpoint_history = {}
    for i = #h, 1, -1 do checkpoint_history[#checkpoint_history + 1] = h[i] end
    local checkpoint_events = stream_ns[key]
    local skip = false
    if durability == "exit" then
      checkpoint_events = { checkpoint_events[#checkpoint_events] }
      if #ns > 0 then
        T.eq(#checkpoint_history, 0, w .. "no subgraph checkpoints")
        skip = true
      end
    end
    if not skip then
      T.eq(#checkpoint_events, #checkpoint_history, w .. "count")
      for i = 1, math.min(#checkpoint_events, #checkpoint_history) do
        local stream, history = checkpoint_events[i], checkpoint_history[i]
        T.eq(stream.values, history.values, w .. "values")
        T.eq(stream.next, history.next, w .. "next")
        T.eq(normalize_config(stream.config), normalize_config(history.config), w .. "config")
        T.eq(normalize_config(stream.parent_config), normalize_config(history.parent_config), w .. "parent_config")
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
  end
end
T.finish()
