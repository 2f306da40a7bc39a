-- langgraph: test_pregel.py::test_debug_retry
-- `checkpointer.list(config)` is the history; debug events have LangGraph's
-- shape { type = "checkpoint", step, timestamp, payload = { config,
-- parent_config, values, metadata, next, tasks } }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{ messages = { reducer = sst.reducers.append, default = sst.array{} } }
local function node(name)
  return function() return { messages = { "entered " .. name .. " node" } } end
end
builder:add_node("one", node("one"))
builder:add_node("two", node("two"))
builder:add_edge(sst.START, "one")
builder:add_edge("one", "two")
builder:add_edge("two", sst.END)
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
graph:invoke({ messages = sst.array{} }, config, { durability = "async" })

-- re-run step: 1
local target_config
for _, c in ipairs(graph:get_state_history(config)) do
  if c.metadata.step == 1 then target_config = c.parent_config; break end
end
T.check(target_config ~= nil, "parent config of step 1")
local update_config = graph:update_state(target_config, nil)

local events = lg.collect(graph:stream(nil, update_config, "debug", { durability = "async" }))
local checkpoint_events = {}
for i = #events, 1, -1 do
  if events[i].type == "checkpoint" then checkpoint_events[#checkpoint_events + 1] = events[i].payload end
end
T.check(#checkpoint_events > 0, "checkpoint events")

local checkpoint_history = {}
for _, c in ipairs(graph:get_state_history(config)) do
  checkpoint_history[c.config.configurable.checkpoint_id] = c
end

local function lax_normalize_config(c)
  if c == nil then return nil end
  return c.configurable
end

for i, stream in ipairs(checkpoint_events) do
  local what = "checkpoint event " .. i
  local stream_conf = lax_normalize_config(stream.config)
  local stream_parent_conf = lax_normalize_config(stream.parent_config)
  T.check(sst.json_encode(stream_conf) ~= sst.json_encode(stream_parent_conf), what .. ": config differs from parent")
  local history = checkpoint_history[stream.config.configurable.checkpoint_id]
  T.check(history ~= nil, what .. ": in the history")
  if history then
    T.eq(stream_conf, lax_normalize_config(history.config), what .. ": config")
    T.eq(stream_parent_conf, lax_normalize_config(history.parent_config), what .. ": parent_config")
  end
end
T.finish()
