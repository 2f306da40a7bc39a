-- langgraph: test_pregel.py::test_checkpoint_metadata
-- A TypedDict state is closed in LangGraph (keys it does not declare are
-- dropped), as a superstep StateGraph that declares fields is by default.
-- The LangChain pieces are written out in Lua: the fake chat model is a list
-- of scripted replies (the prompt template only feeds the fake model, which
-- ignores it; @traceable is Python tracing), ToolNode is a node that runs
-- the last message's tool calls. Messages are superstep's OpenAI-shaped
-- objects (ids checked with lg.any_str and dropped); tool calls keep
-- LangChain's shape. `checkpointer.get_tuple(config).metadata` is
-- `get_state(config).metadata`, `checkpointer.list(config)` is the history.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local responses = {
  { role = "assistant", content = "",
    tool_calls = { { id = "tool_call123", name = "search_api", args = { query = "query" }, type = "tool_call" } } },
  { role = "assistant", content = "answer" },
}
local calls = 0
local function model()
  calls = calls + 1
  return responses[(calls - 1) % #responses + 1]
end
local tools = { search_api = function(args) return "result for " .. args.query end }

local workflow = sst.StateGraph({ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } })
workflow:add_node("agent", function()
  return { messages = model(), usage_metadata = { total_tokens = 123 } }
end)
workflow:add_node("tools", function(state)
  local last = state.messages[#state.messages]
  local out = {}
  for _, call in ipairs(last.tool_calls) do
    out[#out + 1] = { role = "tool", content = tools[call.name](call.args), name = call.name,
                      tool_call_id = call.id }
  end
  return { messages = out }
end)
workflow:set_entry_point("agent")
workflow:add_conditional_edges("agent", function(data)
  local last = data.messages[#data.messages]
  if last.tool_calls == nil or #last.tool_calls == 0 then return "exit" end
  return "continue"
end, { continue = "tools", exit = sst.END })
workflow:add_edge("tools", "agent")

local saver = sst.MemorySaver()
local app = workflow:compile{ checkpointer = saver }
local app_w_interrupt = workflow:compile{ checkpointer = saver, interrupt_before = { "tools" } }

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

local result = app:invoke({ messages = { "what is weather in sf" } },
                          { configurable = { thread_id = "1", test_config_1 = "foo", test_config_2 = "bar" } })
result = sst.to_table(result)
result.messages = strip_ids(result.messages, "invoke")
T.eq(result, { messages = {
  { role = "user", content = "what is weather in sf" },
  { role = "assistant", content = "",
    tool_calls = { { name = "search_api", args = { query = "query" }, id = "tool_call123", type = "tool_call" } } },
  { role = "tool", content = "result for query", name = "search_api", tool_call_id = "tool_call123" },
  { role = "assistant", content = "answer" },
} }, "invoke")

local config = lg.thread("1")
-- Added: usage_metadata is not a channel: no checkpoint holds it.
for i, c in ipairs(app:get_state_history(config)) do
  T.eq(c.values.usage_metadata, nil, "history 1, checkpoint " .. i .. ": no usage_metadata")
end
local m1 = app:get_state(config).metadata or {}
T.eq(m1.test_config_1, "foo", "metadata 1: test_config_1")
T.eq(m1.test_config_2, "bar", "metadata 1: test_config_2")
for i, c in ipairs(app:get_state_history(config)) do
  T.eq(c.metadata.test_config_1, "foo", "history 1, checkpoint " .. i .. ": test_config_1")
  T.eq(c.metadata.test_config_2, "bar", "history 1, checkpoint " .. i .. ": test_config_2")
end

app_w_interrupt:invoke({ messages = { "what is weather in sf" } },
                       { configurable = { thread_id = "2", test_config_3 = "foo", test_config_4 = "bar" } })
config = lg.thread("2")
local m2 = app_w_interrupt:get_state(config).metadata or {}
T.eq(m2.test_config_3, "foo", "metadata 2: test_config_3")
T.eq(m2.test_config_4, "bar", "metadata 2: test_config_4")

app_w_interrupt:invoke(nil, { configurable = { thread_id = "2", test_config_3 = "foo", test_config_4 = "bar" } })
local m3 = app_w_interrupt:get_state(config).metadata or {}
T.eq(m3.test_config_3, "foo", "metadata 3: test_config_3")
T.eq(m3.test_config_4, "bar", "metadata 3: test_config_4")
for i, c in ipairs(app_w_interrupt:get_state_history(config)) do
  T.eq(c.metadata.test_config_3, "foo", "history 2, checkpoint " .. i .. ": test_config_3")
  T.eq(c.metadata.test_config_4, "bar", "history 2, checkpoint " .. i .. ": test_config_4")
end
T.finish()
