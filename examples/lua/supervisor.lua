-- A supervisor routing between two agent subgraphs, with no LLM (docs/subgraphs.md):
--   researcher  a tool loop driven by a scripted model: model -> tools -> model ...
--               until it answers, then hands off to the writer with
--               Command{graph = PARENT} (its conversation stays private)
--   writer      drafts from the findings and asks a human for approval with
--               interrupt() inside the subgraph; any other answer than
--               "approve" is feedback and the writer drafts again
--   supervisor  decides who works next and when the task is done
--
--   superstep run examples/lua/supervisor.lua --db /tmp/sv.db --thread t1 --input '{"task":"durable graphs"}'
--   superstep state examples/lua/supervisor.lua --db /tmp/sv.db --thread t1
--   superstep run examples/lua/supervisor.lua --db /tmp/sv.db --thread t1 --resume '"approve"'
-- Each node says what it does on stderr; the resume shows that only the
-- writer's approval step runs again.
local sst = superstep or require("superstep")

local function say(fmt, ...) io.stderr:write(string.format(fmt, ...), "\n") end

-- ---- the researcher: a ReAct loop --------------------------------------

-- Tools, as the agent layer's tools are: a name and a Lua function.
local tools = {
  search = function(args) return "3 articles on " .. args.query end,
  read = function(args) return args.url .. ": checkpoints make long runs resumable" end,
}

-- The scripted model: reply k of the conversation is SCRIPT[k], in the
-- OpenAI shape the agent layer's offline model (fake:FILE) replays. (The
-- prebuilt create_react_agent{model = "fake:FILE", tools = ...} is an app
-- too and can be a node: docs/subgraphs.md, "An agent as a node".)
local function call(id, name, args)
  return { id = id, type = "function",
           ["function"] = { name = name, arguments = sst.json_encode(args) } }
end
local SCRIPT = {
  function(task) return { tool_calls = { call("c1", "search", { query = task }) } } end,
  function(task)
    local url = "https://example.org/" .. task:gsub(" ", "-")
    return { tool_calls = { call("c2", "read", { url = url }) } }
  end,
  function(task) return { content = "Done researching " .. task .. "." } end,
}

local researcher = sst.StateGraph{
  task = sst.reducers.replace,               -- shared with the supervisor (read)
  messages = sst.reducers.add_messages,      -- private: the supervisor declares no such field
}

researcher:add_node("model", function(state)
  local msgs = state.messages and sst.to_table(state.messages) or {}
  local turn = 1
  for _, m in ipairs(msgs) do if m.role == "assistant" then turn = turn + 1 end end
  local reply = SCRIPT[turn](state.task)
  reply.role = "assistant"
  say("researcher/model: turn %d%s", turn, reply.tool_calls and ", calls a tool" or ", answers")
  if #msgs == 0 then   -- the first turn also records the question
    return { messages = { { role = "user", content = "Research: " .. state.task }, reply } }
  end
  return { messages = { reply } }
end)

researcher:add_node("tools", function(state)
  local out = {}
  for _, c in ipairs(state.messages[#state.messages].tool_calls) do
    local fn = c["function"]
    local result = tools[fn.name](sst.json_decode(fn.arguments))
    say("researcher/tools: %s -> %s", fn.name, result)
    out[#out + 1] = { role = "tool", tool_call_id = c.id, content = result }
  end
  return { messages = out }
end)

-- The handoff: ends the researcher and routes in the supervisor's graph.
-- Only this update reaches the parent (the subgraph's own state does not).
researcher:add_node("handoff", function(state)
  local findings, calls = {}, 0
  for _, m in ipairs(state.messages) do
    if m.role == "tool" then findings[#findings + 1] = m.content; calls = calls + 1 end
  end
  findings[#findings + 1] = state.messages[#state.messages].content
  say("researcher/handoff: %d findings -> writer", #findings)
  return sst.Command{ graph = sst.PARENT, ["goto"] = "writer",
                      update = { findings = findings, tool_calls = calls } }
end)

researcher:add_edge(sst.START, "model")
researcher:add_conditional_edges("model", function(state)
  return state.messages[#state.messages].tool_calls and "tools" or "handoff"
end, { "tools", "handoff" })
researcher:add_edge("tools", "model")

-- ---- the writer: draft, then a human approves ---------------------------

local writer = sst.StateGraph{
  findings = sst.reducers.replace, draft = sst.reducers.replace,
  feedback = sst.reducers.replace, approved = sst.reducers.replace,
}

writer:add_node("draft", function(state)
  local text = "Report: " .. table.concat(sst.to_table(state.findings), " / ")
  if state.feedback then text = text .. " (revised: " .. state.feedback .. ")" end
  say("writer/draft: %s", text)
  return { draft = text }
end)

-- interrupt() inside a subgraph stops the whole run; --resume answers it and
-- the writer continues from its own checkpoint (draft does not run again).
writer:add_node("review", function(state)
  local answer = sst.interrupt({ question = "Approve this draft?", draft = state.draft })
  say("writer/review: %s", sst.json_encode(answer))
  if answer == "approve" then return { approved = true } end
  return { approved = false, feedback = tostring(answer) }
end)

writer:add_edge(sst.START, "draft")
writer:add_edge("draft", "review")
writer:add_edge("review", sst.END)

-- ---- the supervisor ----------------------------------------------------

local graph = sst.StateGraph{
  task = sst.reducers.replace,
  findings = sst.reducers.replace,
  tool_calls = { reducer = sst.reducers.sum, default = 0 },
  draft = sst.reducers.replace,
  feedback = sst.reducers.replace,
  approved = sst.reducers.replace,
}

graph:add_node("supervisor", function() end)   -- it decides in its router, below
-- A compiled graph as a node; the researcher's handoff may go to "writer".
graph:add_node("researcher", researcher:compile(), { ends = { "writer" } })
graph:add_node("writer", writer:compile())

graph:add_edge(sst.START, "supervisor")
graph:add_conditional_edges("supervisor", function(state)
  local go = not state.findings and "researcher" or state.approved and sst.END or "writer"
  say("supervisor: %s", go == sst.END and "done" or "next is " .. go)
  return go
end, { "researcher", "writer", sst.END })
graph:add_edge("writer", "supervisor")

return graph:compile{}
