-- agent (tests/web): a ReAct-style agent without a model, compiled with
-- interrupt_before = {"tools"}, for the page's tool-call approve / edit /
-- reject buttons. `agent` answers a human message "A+B" with an AI message
-- calling the tool `add` {a = A, b = B} (any other text: a plain reply);
-- after tool results it replies "The tool said: R1, R2." with their contents.
-- `tools` runs the last AI message's tool calls with the args they hold then
-- (so an edited call runs with the edited args). Messages are OpenAI-style (what add_messages takes):
-- {role = "user" | "assistant" | "tool", content, tool_calls = {{id, name, args}}}.
local sst = superstep or require("superstep")

local function kind(m) return m.type or m.role end

local g = sst.StateGraph{
  messages = { reducer = sst.reducers.add_messages, default = {} },
}

g:add_node("agent", function(state)
  local msgs = state.messages
  local last = msgs[#msgs]
  if last == nil then
    return { messages = { { role = "assistant", content = "Ask me to add two numbers, like 2+40." } } }
  end
  if kind(last) == "tool" then
    local said = {}
    for i = #msgs, 1, -1 do
      if kind(msgs[i]) ~= "tool" then break end
      table.insert(said, 1, tostring(msgs[i].content))
    end
    return { messages = { { role = "assistant", content = "The tool said: " .. table.concat(said, ", ") .. "." } } }
  end
  local a, b = tostring(last.content):match("(%-?%d+)%s*%+%s*(%-?%d+)")
  if a == nil then
    return { messages = { { role = "assistant", content = "Ask me to add two numbers, like 2+40." } } }
  end
  return { messages = { { role = "assistant", content = "Let me add them up.",
                          tool_calls = { { id = "call_" .. #msgs, name = "add",
                                           args = { a = tonumber(a), b = tonumber(b) } } } } } }
end)

g:add_node("tools", function(state)
  local last = state.messages[#state.messages]
  local out = {}
  for _, call in ipairs(last.tool_calls or {}) do
    local args = call.args or {}
    out[#out + 1] = { role = "tool", tool_call_id = call.id, name = call.name,
                      content = tostring((tonumber(args.a) or 0) + (tonumber(args.b) or 0)) }
  end
  return { messages = out }
end)

g:add_edge(sst.START, "agent")
g:add_conditional_edges("agent", function(state)
  local last = state.messages[#state.messages]
  if last and last.tool_calls and #last.tool_calls > 0 then return "tools" end
  return sst.END
end, { "tools", sst.END })
g:add_edge("tools", "agent")
return g:compile{ interrupt_before = { "tools" } }
