-- chat (superstep only; LangGraph.js's peer server does not serve it): the
-- prebuilt ReAct agent on the scripted offline model, for the "messages" and
-- "messages-tuple" stream modes. Every run asks one thing and gets the same
-- exchange: a reply calling the `add` tool (its text streamed as tokens), the
-- tool's answer, then the final reply "The answer is 42." (streamed too).
-- The fake model replays chat_replies.jsonl in order, one reply per call, and
-- each worker loads its own copy of this script: the file holds the same two
-- replies many times over, enough for any test session.
local sst = superstep or require("superstep")

local dir = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"

return sst.create_react_agent{
  model = "fake:" .. dir .. "chat_replies.jsonl",
  tools = {
    { name = "add", description = "Adds two integers.",
      parameters = { type = "object",
                     properties = { a = { type = "integer" }, b = { type = "integer" } },
                     required = { "a", "b" } },
      fn = function(args) return args.a + args.b end },
  },
}
