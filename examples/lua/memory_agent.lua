-- Long-term memory for the prebuilt agent (LangMem's manage_memory and
-- search_memory tools over a store): an agent remembers a fact across two
-- conversations (threads) of the same user.
--   thread 1  the user says "my favourite colour is teal"; the model calls
--             manage_memory, which stores the fact under ("memories", "u1")
--   thread 2  a new thread, the same user_id: the model calls search_memory,
--             reads the memory back, and answers with the colour
-- The namespace's "{user_id}" is filled from each run's config.configurable.
-- The model is scripted (examples/agent/memory_replies.jsonl); with a real
-- one (model = "https://api.openai.com/v1", model_name = "gpt-4o-mini") the
-- same agent decides for itself when to remember and when to search.
--   superstep run examples/lua/memory_agent.lua --db :memory: --input '{"user_id":"u1"}'
-- prints the final state: what thread 2 recalled and the answer.
local sst = superstep or require("superstep")

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

-- InMemoryStore lives as long as the process; SqliteStore("memories.db")
-- keeps the memories on disk (the file may be the checkpoint database).
local store = sst.InMemoryStore()

local agent = sst.create_react_agent{
  model = "fake:" .. here .. "../agent/memory_replies.jsonl",
  system_prompt = "You are a helpful assistant with a long-term memory.",
  store = store,
  memory = { namespace = { "memories", "{user_id}" } },
  checkpointer = sst.MemorySaver(), -- each conversation is a thread of its own
}

-- One user turn in conversation @p thread: the new messages of the reply.
local function chat(thread, user_id, text)
  local before = 0
  local ok, state = pcall(agent.get_state, agent, { configurable = { thread_id = thread } })
  if ok and state and state.values and state.values.messages then
    before = #state.values.messages
  end
  local out = agent:invoke({ messages = { { role = "user", content = text } } },
                           { configurable = { thread_id = thread, user_id = user_id } })
  local new = {}
  for i = before + 1, #out.messages do new[#new + 1] = out.messages[i] end
  return new
end

local function say(role, text) io.stderr:write(string.format("  %-9s %s\n", role, text)) end

-- Prints a conversation turn; returns the last reply and the tool results.
local function show(thread, messages)
  io.stderr:write(thread, ":\n")
  local tools = {}
  for _, m in ipairs(messages) do
    if m.role == "tool" then
      tools[#tools + 1] = m.content
      say(m.name or "tool", m.content)
    elseif m.role == "assistant" and m.tool_calls then
      for _, c in ipairs(m.tool_calls) do
        say("assistant", "calls " .. c["function"].name .. " " .. c["function"].arguments)
      end
    else
      say(m.role, m.content)
    end
  end
  return messages[#messages].content, tools
end

local g = sst.StateGraph{
  user_id = sst.reducers.replace,
  recalled = sst.reducers.replace,
  answer = sst.reducers.replace,
}
g:add_node("thread_1", function(state)
  local _, tools = show("thread 1", chat("chat-1", state.user_id, "My favourite colour is teal."))
  assert(tools[1] and tools[1]:find('"status":"created"', 1, true), "manage_memory created nothing")
  return {}
end)
g:add_node("thread_2", function(state)
  local answer, tools = show("thread 2", chat("chat-2", state.user_id, "What is my favourite colour?"))
  local recalled = tools[1] or ""
  -- The colour in the answer is the one the memory search returned.
  local colour = recalled:match("favourite colour is (%a+)")
  assert(colour and answer:find(colour, 1, true), "the answer does not use the recalled memory")
  return { recalled = recalled, answer = answer }
end)
g:add_edge(sst.START, "thread_1")
g:add_edge("thread_1", "thread_2")
g:add_edge("thread_2", sst.END)
return g
