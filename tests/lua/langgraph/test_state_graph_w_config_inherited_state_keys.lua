-- langgraph: test_pregel.py::test_state_graph_w_config_inherited_state_keys
-- Left out: the type-hint check of the inherited TypedDict, the JSON-schema
-- snapshots and `builder.channels.keys()` (Python internals). The prompt |
-- FakeStreamingListLLM | parser chain is a node answering the listed
-- responses in turn; the tool is a Lua function. AgentAction and AgentFinish
-- are tables with their fields; a (action, observation) tuple is a list.
local sst = superstep
local T = require("checks")

local tools = { search_api = function(query) return "result for " .. query end }

local responses = { "tool:search_api:query", "tool:search_api:another", "finish:answer" }
local calls = 0
local function agent()
  calls = calls + 1
  local input = responses[(calls - 1) % #responses + 1]
  if input:sub(1, 6) == "finish" then
    local answer = input:match("^[^:]*:(.*)$")
    return { agent_outcome = { return_values = { answer = answer }, log = input } }
  end
  local tool_name, tool_input = input:match("^[^:]*:([^:]*):(.*)$")
  return { agent_outcome = { tool = tool_name, tool_input = tool_input, log = input } }
end

local function execute_tools(data)
  local agent_action = sst.to_table(data.agent_outcome)
  local observation = tools[agent_action.tool](agent_action.tool_input)
  return { intermediate_steps = { { agent_action, observation } } }
end

local function should_continue(data)
  if data.agent_outcome.return_values ~= nil then return "exit" end
  return "continue"
end

local builder = sst.StateGraph({
  input = sst.reducers.replace,
  agent_outcome = sst.reducers.replace,
  intermediate_steps = { reducer = sst.reducers.append, default = sst.array{} },
}, { context_schema = { "tools" } })
builder:add_node("agent", agent)
builder:add_node("tools", execute_tools)
builder:set_entry_point("agent")
builder:add_conditional_edges("agent", should_continue, { continue = "tools", exit = sst.END })
builder:add_edge("tools", "agent")
local app = builder:compile()

T.eq(app:invoke({ input = "what is weather in sf" }), {
  agent_outcome = { return_values = { answer = "answer" }, log = "finish:answer" },
  input = "what is weather in sf",
  intermediate_steps = {
    { { tool = "search_api", tool_input = "query", log = "tool:search_api:query" }, "result for query" },
    { { tool = "search_api", tool_input = "another", log = "tool:search_api:another" }, "result for another" },
  },
}, "invoke")
T.finish()
