-- Agent middleware (LangChain 1.x's create_agent middleware), three kinds:
--   * human in the loop: send_email waits for a person to approve, edit,
--     reject or answer it (lookup runs without asking);
--   * a call limit: at most 5 model calls per run;
--   * a middleware written here: before each model call it logs how long
--     the conversation is, and it wraps each tool call to time it.
-- The model is scripted (middleware_replies.jsonl); the thread is durable,
-- so the run waits for the decision across processes:
--   superstep run examples/agent/middleware.lua --db app.db --thread t1 \
--     --input '{"messages": [{"role": "user", "content": "Weather in Lisbon? Tell the team."}]}'
--   (exit code 3: interrupted; the pending send_email is printed)
--   superstep run examples/agent/middleware.lua --db app.db --thread t1 --resume \
--     '{"decisions": [{"type": "edit", "edited_action": {"name": "send_email",
--       "args": {"to": "me@example.org", "body": "Lisbon: 21C"}}}]}'
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

return sst.create_react_agent{
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
}
