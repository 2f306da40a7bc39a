-- Agent middleware (LangChain 1.x's create_agent middleware), three kinds:
--   * human in the loop: send_email waits for a person to approve, edit,
--     reject or answer it (lookup runs without asking);
--   * a call limit: at most 5 model calls per run;
--   * a middleware written here: before each model call it logs how long
--     the conversation is, and it wraps each tool call to time it.
-- The model is scripted (middleware_replies.jsonl). The agent's thread is
-- durable: its first run stops at the interrupt, and a second run resumes it
-- with the decision this script was given:
--   superstep run examples/agent/middleware.lua --db :memory: --input \
--     '{"decision": {"type": "edit", "edited_action": {"name": "send_email",
--       "args": {"to": "me@example.org", "body": "Lisbon: 21C"}}}}'
-- prints what the person was asked, what the tools did and the answer.
-- (Under `superstep serve` the same agent waits for the decision from any
-- client, the web page included: resume with {"decisions": [...]}.)
local sst = superstep or require("superstep")

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

local log = sst.middleware.new{
  name = "log",
  before_model = function(state, ctx)
    io.stderr:write(string.format("model call with %d messages\n", #state.messages))
  end,
  wrap_tool_call = function(call, handler)
    local t0 = os.clock()
    local result = handler(call)
    io.stderr:write(string.format("tool %s took %.3f ms\n", call["function"].name,
                                  (os.clock() - t0) * 1000))
    return result
  end,
}

local agent = sst.create_react_agent{
  model = "fake:" .. here .. "middleware_replies.jsonl",
  tools = {
    { name = "lookup", description = "The weather of a city.",
      parameters = { type = "object", properties = { city = { type = "string" } },
                     required = { "city" } },
      fn = function(args) return args.city .. ": 21C" end },
    { name = "send_email", description = "Sends an email.",
      parameters = { type = "object", properties = { to = { type = "string" },
                                                     body = { type = "string" } },
                     required = { "to", "body" } },
      fn = function(args) return "sent to " .. args.to end },
  },
  middleware = {
    sst.middleware.human_in_the_loop{ interrupt_on = {
      send_email = { allowed_decisions = { "approve", "edit", "reject" },
                     description = "An email leaves the building" } } },
    sst.middleware.model_call_limit{ run_limit = 5 },
    log,
  },
  checkpointer = sst.MemorySaver(),
}

local g = sst.StateGraph{ decision = sst.reducers.replace, asked = sst.reducers.replace,
                          tool_results = sst.reducers.replace, answer = sst.reducers.replace }
g:add_node("chat", function(state)
  local cfg = { configurable = { thread_id = "chat-1" } }
  local first = agent:invoke({ messages = { { role = "user",
                                              content = "Weather in Lisbon? Tell the team." } } }, cfg)
  local ask = first.__interrupt__[1].value.action_requests[1]
  io.stderr:write("asked: ", ask.name, " ", sst.json_encode(ask.args), " (", ask.description, ")\n")
  local done = agent:invoke(sst.Command{ resume = { decisions = { state.decision } } }, cfg)
  local results = {}
  for _, m in ipairs(done.messages) do
    if m.role == "tool" then results[#results + 1] = m.name .. ": " .. m.content end
  end
  return { asked = ask, tool_results = results, answer = done.messages[#done.messages].content }
end)
g:add_edge(sst.START, "chat")
g:add_edge("chat", sst.END)
return g:compile()
