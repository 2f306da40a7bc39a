-- The tools of an MCP server in an agent: the official reference server
-- (@modelcontextprotocol/server-everything, over stdio) next to a Lua tool.
-- The scripted model (mcp_replies.jsonl) calls the server's echo and
-- get-sum and the Lua tool shout in one step; the agent runs all three in
-- parallel and answers. Install the server once with
--   npm ci --prefix tests/mcp
-- (or point $MCP_EVERYTHING at its dist/index.js), then:
--   superstep run examples/agent/mcp.lua --db :memory: --input '{"question": "2 + 40?"}'
-- With a real model (model = "anthropic:claude-sonnet-4-5") the model picks
-- the tools itself from the server's list.
local sst = superstep or require("superstep")

local here = debug.getinfo(1, "S").source:match("^@(.*[/\\])") or "./"
local server = os.getenv("MCP_EVERYTHING") or
  (here .. "../../tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js")

local everything = sst.mcp_tools{ command = { "node", server, "stdio" } }

local agent = sst.create_react_agent{
  model = "fake:" .. here .. "mcp_replies.jsonl",
  tools = {
    everything, -- every tool the server lists
    { name = "shout", description = "Upper-cases a text.",
      parameters = { type = "object", properties = { text = { type = "string" } },
                     required = { "text" } },
      fn = function(args) return string.upper(args.text) end },
  },
}

local g = sst.StateGraph{ question = sst.reducers.replace, answer = sst.reducers.replace,
                          tool_results = sst.reducers.replace }
g:add_node("ask", function(state)
  local out = agent:invoke{ messages = { { role = "user", content = state.question } } }
  local results = {}
  for _, m in ipairs(out.messages) do
    if m.role == "tool" then
      results[#results + 1] = m.name .. ": " .. m.content
      io.stderr:write(m.name, " -> ", m.content, "\n")
    end
  end
  return { answer = out.messages[#out.messages].content, tool_results = results }
end)
g:add_edge(sst.START, "ask")
g:add_edge("ask", sst.END)
return g:compile()
