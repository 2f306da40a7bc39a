-- W3 (../shared/peers/langgraphjs): a chat loop without an LLM. `llm`
-- appends an assistant message with a tool call, `tool` appends the tool's
-- reply; `turns` iterations, one checkpoint per superstep.
--   superstep run examples/lua/w3_chat.lua --db /tmp/w3.db --input '{"turns":100}'
local sst = superstep or require("superstep")

local g = sst.StateGraph{
  messages = { reducer = sst.reducers.add_messages, default = {} },
  turns = sst.reducers.replace,
  done = { reducer = sst.reducers.sum, default = 0 },
}
g:add_node("llm", function(state)
  local i = state.done + 1
  return { messages = { { role = "assistant", content = "calling the tool, turn " .. i,
                          tool_calls = { { id = "call-" .. i, name = "lookup",
                                           args = { q = "turn " .. i } } } } } }
end)
g:add_node("tool", function(state)
  local i = state.done + 1
  return { messages = { { role = "tool", tool_call_id = "call-" .. i, content = "result " .. i } },
           done = 1 }
end)
g:add_edge(sst.START, "llm")
g:add_edge("llm", "tool")
g:add_conditional_edges("tool", function(state)
  if state.done >= state.turns then return sst.END end
  return "llm"
end, { "llm", sst.END })
return g:compile{ recursion_limit = 100000 }
