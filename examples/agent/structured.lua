-- Structured output (LangChain's response_format): the agent's final answer
-- is checked against a JSON schema and kept as a value, structured_response.
-- The scripted model (structured_replies.jsonl) first gives the age as text;
-- the agent sends the schema error back ("/age: expected integer, got
-- string") and the model answers again, correctly. With a real model the
-- same script works unchanged: model = "openai:gpt-4o-mini" (OpenAI's
-- json_schema mode) or "anthropic:claude-sonnet-4-5" (a tool it must call).
--   superstep run examples/agent/structured.lua --db :memory: \
--     --input '{"text": "Write to Ada Lovelace (36) at ada@example.org."}'
-- prints the contact and the tokens the run used.
local sst = superstep or require("superstep")

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

local agent = sst.create_react_agent{
  model = "fake:" .. here .. "structured_replies.jsonl",
  system_prompt = "Extract the contact the text names.",
  response_format = {
    title = "Contact",
    description = "A person to write to.",
    type = "object",
    properties = {
      name = { type = "string", minLength = 1 },
      email = { type = "string", pattern = "^[^@ ]+@[^@ ]+$" },
      age = { type = "integer", minimum = 0 },
    },
    required = { "name", "email" },
    additionalProperties = false,
  },
}

local g = sst.StateGraph{
  text = sst.reducers.replace,
  contact = sst.reducers.replace,
  retries = sst.reducers.replace,
}
g:add_node("extract", function(state)
  local out = agent:invoke({ messages = { { role = "user", content = state.text } } })
  -- Every reply is kept: the wrong answer, the error sent back, the right one.
  local retries = 0
  for _, m in ipairs(out.messages) do
    if m.role == "tool" and m.content:find("^error: ") then
      retries = retries + 1
      io.stderr:write("sent back: ", m.content:gsub("\n.*", ""), "\n")
    end
  end
  return { contact = out.structured_response, retries = retries }
end)
g:add_edge(sst.START, "extract")
g:add_edge("extract", sst.END)
return g:compile()
