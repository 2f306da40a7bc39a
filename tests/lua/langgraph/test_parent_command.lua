-- langgraph: test_pregel.py::test_parent_command
-- The subgraph_persist parameter is a loop. The @tool is a node returning
-- the Command. Messages are superstep's OpenAI-shaped objects (ids checked
-- with lg.any_str and dropped; LangChain's additional_kwargs and
-- response_metadata have no equivalent).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function strip_ids(messages, what)
  local out = {}
  for i, m in ipairs(messages or {}) do
    T.check(lg.any_str(m.id), what .. ": message " .. i .. " id")
    local c = {}
    for k, v in pairs(m) do if k ~= "id" then c[k] = v end end
    out[i] = c
  end
  return out
end

for _, subgraph_persist in ipairs({ true, false }) do
  local what = "subgraph_persist=" .. tostring(subgraph_persist) .. ": "
  local sb = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
  sb:add_node("tool", function()
    return sst.Command{ update = { user_name = "Meow" }, graph = sst.PARENT }
  end)
  sb:add_edge(sst.START, "tool")
  local subgraph = sb:compile{ checkpointer = subgraph_persist }

  local builder = sst.StateGraph{
    messages = { reducer = sst.reducers.add_messages, default = sst.array{} },
    user_name = sst.reducers.replace,
  }
  builder:add_node("alice", subgraph)
  builder:add_edge(sst.START, "alice")
  local graph = builder:compile{ checkpointer = sst.MemorySaver() }
  local config = lg.thread("1")

  local result = graph:invoke({ messages = { { "user", "get user name" } } }, config, { durability = "exit" })
  result.messages = strip_ids(result.messages, what .. "invoke")
  T.eq(result, { messages = { { role = "user", content = "get user name" } }, user_name = "Meow" }, what .. "invoke")

  local state = graph:get_state(config)
  state.values.messages = strip_ids(state.values.messages, what .. "state")
  T.eq(state.values, { messages = { { role = "user", content = "get user name" } }, user_name = "Meow" },
       what .. "state values")
  T.eq(state.next, sst.array{}, what .. "next")
  T.eq(state.config.configurable.thread_id, "1", what .. "config thread_id")
  T.eq(state.config.configurable.checkpoint_ns, "", what .. "config checkpoint_ns")
  T.check(lg.any_str(state.config.configurable.checkpoint_id), what .. "config checkpoint_id")
  T.eq(state.metadata, { source = "loop", step = 1, parents = sst.object{} }, what .. "metadata")
  T.check(lg.any_str(state.created_at), what .. "created_at")
  T.eq(state.parent_config, nil, what .. "parent_config")
  T.eq(state.tasks, sst.array{}, what .. "tasks")
  T.eq(state.interrupts, sst.array{}, what .. "interrupts")
end
T.finish()
