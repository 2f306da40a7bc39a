-- A durable research-style workflow that needs no LLM:
--   plan     splits the topic into questions
--   research runs once per question, in parallel (Send fan-out)
--   fetch    a flaky source that fails on its first attempt and is retried
--   approve  waits for a human (interrupt) before the report is written
--   report   joins research and fetch (wait for both) and writes the summary
--
--   superstep run examples/lua/research.lua --input '{"topic":"durable graphs"}'
--   superstep run examples/lua/research.lua --thread ID --resume '"yes"'
local sst = superstep or require("superstep")

local graph = sst.StateGraph{
  topic = sst.reducers.replace,
  questions = sst.reducers.replace,
  notes = { reducer = sst.reducers.append, default = {} },
  sources = { reducer = sst.reducers.append, default = {} },
  approved = sst.reducers.replace,
  report = sst.reducers.replace,
}

graph:add_node("plan", function(state)
  local qs = {}
  for _, aspect in ipairs({ "history", "design", "costs" }) do
    qs[#qs + 1] = state.topic .. ": " .. aspect
  end
  return { questions = qs }
end)

graph:add_node("research", function(state, question)
  return { notes = { "notes on " .. question } }
end)

-- Fails on its first attempt, as a flaky network source would; the retry
-- policy runs it again without a delay.
graph:add_node("fetch", function(state, input, ctx)
  if ctx.attempt == 1 then
    error("source temporarily unavailable")
  end
  return { sources = { "archive.example/" .. state.topic:gsub(" ", "-") } }
end, { retry = { max_attempts = 3, initial_interval = 0, jitter = false } })

graph:add_node("approve", function(state)
  local answer = sst.interrupt({ question = "publish the report?", notes = #state.notes })
  return { approved = (answer == "yes") }
end)

graph:add_node("report", function(state)
  if not state.approved then
    return { report = "not approved" }
  end
  return { report = string.format("%s: %d notes from %d sources", state.topic, #state.notes,
                                  #state.sources) }
end)

graph:add_edge(sst.START, "plan")
graph:add_conditional_edges("plan", function(state)
  local sends = {}
  for _, q in ipairs(state.questions) do
    sends[#sends + 1] = sst.Send("research", q)
  end
  return sends
end)
graph:add_edge(sst.START, "fetch")
graph:add_edge({ "research", "fetch" }, "approve")
graph:add_edge("approve", "report")
graph:add_edge("report", sst.END)

return graph:compile{}
