-- The agent layer's parts through Lua (docs/agent.md): structured output,
-- one model call, middleware written in Lua and the built-in ones, model
-- specs, and an MCP server's tools (the reference server, when tests/mcp's
-- packages are installed: $SST_NODE and $SST_MCP_DIR). Run by
-- tests/unit/test_lua.c through sst_lua_script_load.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")
local check, eq, raises, case = T.check, T.eq, T.raises, T.case

-- A scripted model from JSON lines (a temp file).
local function scripted(lines)
  local path = os.tmpname()
  local f = assert(io.open(path, "w"))
  for _, l in ipairs(lines) do f:write(sst.json_encode(l), "\n") end
  f:close()
  return "fake:" .. path, path
end

local function call(id, name, args)
  return { id = id, type = "function", ["function"] = { name = name, arguments = sst.json_encode(args) } }
end

local contact = {
  title = "Contact", type = "object",
  properties = { name = { type = "string" }, age = { type = "integer", minimum = 0 } },
  required = { "name", "age" }, additionalProperties = false,
}

local echo = {
  name = "echo", description = "Echoes.",
  parameters = { type = "object", properties = { text = { type = "string" } } },
  fn = function(args) return "echo: " .. (args.text or "") end,
}

case("structured output: a wrong answer goes back, the right one is kept", function()
  local spec, path = scripted{
    { content = sst.null, tool_calls = { call("c1", "Contact", { name = "Ada", age = "36" }) },
      usage_metadata = { input_tokens = 10, output_tokens = 2, total_tokens = 12 } },
    { content = sst.null, tool_calls = { call("c2", "Contact", { name = "Ada", age = 36 }) },
      usage_metadata = { input_tokens = 15, output_tokens = 2, total_tokens = 17 } },
  }
  local agent = sst.create_react_agent{ model = spec, response_format = contact }
  local out = agent:invoke{ messages = { { role = "user", content = "Ada, 36" } } }
  eq(out.structured_response, { age = 36, name = "Ada" }, "the answer")
  check(out.messages[3].content:find("/age: expected integer, got string", 1, true),
        "the error sent back: " .. tostring(out.messages[3].content))
  eq(out.messages[#out.messages].content, 'Returning structured response: {"age":36,"name":"Ada"}',
     "the answer's tool message (the arguments as the model wrote them)")
  -- The schema as JSON text, and a schema that is not an object schema.
  raises(function() sst.create_react_agent{ model = spec, response_format = '{"type": "array"}' } end,
         "must describe an object", "an array schema")
  raises(function() sst.create_react_agent{ model = spec, response_format = 5 } end,
         "response_format must be a JSON schema", "a number")
  raises(function() sst.create_react_agent{ model = spec, response_format = contact,
                                            structured_strategy = "magic" } end,
         "structured_strategy must be", "a bad strategy")
  os.remove(path)
end)

case("model_invoke: one call, structured by the provider strategy", function()
  local spec, path = scripted{
    { content = '{"name": "Bo"}' },
    { content = '{"name": "Bo", "age": 7}' },
  }
  local reply = sst.model_invoke{ model = spec, messages = { { role = "user", content = "?" } },
                                  response_format = contact, structured_strategy = "provider" }
  eq(reply.structured_response, { age = 7, name = "Bo" }, "the answer after one retry")
  -- Each call loads the model afresh: one attempt meets the wrong first answer.
  raises(function() sst.model_invoke{ model = spec, messages = { { role = "user", content = "?" } },
                                      response_format = contact, structured_strategy = "provider",
                                      max_attempts = 1 } end,
         "no valid answer after 1 attempts; the last: the answer does not match the schema",
         "the bound")
  raises(function() sst.model_invoke{ model = spec, messages = "hi" } end,
         "messages must be a list", "bad messages")
  raises(function() sst.model_invoke{ model = { provider = "gemini", model = "x" }, messages = {} } end,
         'model.provider must be "openai" or "anthropic"', "an unknown provider")
  os.remove(path)
end)

case("middleware written in Lua: hooks in order, wraps, a jump", function()
  local log = {}
  local function mw(name, jump)
    return sst.middleware.new{
      name = name,
      before_agent = function(state) log[#log + 1] = name .. ".ba" end,
      before_model = function(state) log[#log + 1] = name .. ".bm" end,
      after_model = function(state)
        log[#log + 1] = name .. ".am"
        if jump then return { messages = { { role = "assistant", content = "cut short" } }, jump_to = "end" } end
      end,
      after_agent = function(state) log[#log + 1] = name .. ".aa" end,
      wrap_model_call = function(request, handler)
        request.system_prompt = (request.system_prompt or "") .. "+" .. name
        local reply = handler(request)
        log[#log + 1] = name .. ".wm:" .. request.system_prompt
        return reply
      end,
      wrap_tool_call = function(tc, handler)
        local r = handler(tc)
        r.content = r.content .. " (" .. name .. ")"
        return r
      end,
    }
  end
  local spec, path = scripted{
    { content = sst.null, tool_calls = { call("c1", "echo", { text = "hi" }) } },
    { content = "done" },
  }
  local agent = sst.create_react_agent{ model = spec, tools = { echo }, system_prompt = "sys",
                                        middleware = { mw("A"), mw("B") } }
  local out = agent:invoke{ messages = { { role = "user", content = "go" } } }
  eq(out.messages[3].content, "echo: hi (B) (A)", "the tool wrapped by B inside A")
  eq(out.messages[4].content, "done", "the answer")
  eq(log, { "A.ba", "B.ba", "A.bm", "B.bm", "B.wm:sys+A+B", "A.wm:sys+A", "B.am", "A.am",
            "A.bm", "B.bm", "B.wm:sys+A+B", "A.wm:sys+A", "B.am", "A.am", "B.aa", "A.aa" },
     "LangChain's order")
  os.remove(path)
  log = {}
  spec, path = scripted{ { content = "first" } }
  agent = sst.create_react_agent{ model = spec, middleware = { mw("A"), mw("B", true) } }
  out = agent:invoke{ messages = { { role = "user", content = "go" } } }
  eq(out.messages[#out.messages].content, "cut short", "B jumped to the end")
  eq(log, { "A.ba", "B.ba", "A.bm", "B.bm", "B.wm:+A+B", "A.wm:+A", "B.am", "B.aa", "A.aa" },
     "A's after_model skipped")
  raises(function() sst.middleware.new{ name = "x" } end, "it has no hook", "no hooks")
  raises(function() sst.middleware.new{ before_model = function() end } end, "a name is needed", "no name")
  raises(function() sst.create_react_agent{ model = spec, middleware = { 5 } } end,
         "middleware 1 is not a superstep.middleware", "not a middleware")
  os.remove(path)
end)

case("built-in middleware: human in the loop on a durable thread, call limits", function()
  local spec, path = scripted{
    { content = sst.null, tool_calls = { call("c1", "echo", { text = "a" }) } },
    { content = "after the decision" },
  }
  local agent = sst.create_react_agent{
    model = spec, tools = { echo }, checkpointer = sst.MemorySaver(),
    middleware = { sst.middleware.human_in_the_loop{ interrupt_on = { echo = true } } } }
  local cfg = { configurable = { thread_id = "h1" } }
  local first = agent:invoke({ messages = { { role = "user", content = "go" } } }, cfg)
  local ask = first.__interrupt__[1].value
  eq(ask.action_requests[1].args, { text = "a" }, "the call's arguments")
  eq(ask.review_configs[1].allowed_decisions, { "approve", "edit", "reject", "respond" }, "decisions")
  local done = agent:invoke(sst.Command{ resume = { decisions = {
    { type = "edit", edited_action = { name = "echo", args = { text = "b" } } } } } }, cfg)
  eq(done.messages[3].content, "echo: b", "the edited call ran")
  eq(done.messages[4].content, "after the decision", "the answer")
  os.remove(path)

  spec, path = scripted{
    { content = sst.null, tool_calls = { call("c1", "echo", {}) } },
    { content = sst.null, tool_calls = { call("c2", "echo", {}) } },
    { content = sst.null, tool_calls = { call("c3", "echo", {}) } },
  }
  agent = sst.create_react_agent{ model = spec, tools = { echo }, middleware = {
    sst.middleware.model_call_limit{ run_limit = 2 },
    sst.middleware.tool_call_limit{ tool = "echo", run_limit = 1 } } }
  local out = agent:invoke{ messages = { { role = "user", content = "go" } } }
  eq(out.messages[#out.messages].content, "Model call limits exceeded: run limit (2/2)", "the model limit")
  check(out.messages[5].content:find("tool call limit exceeded", 1, true), "the second echo blocked: "
        .. tostring(out.messages[5].content))
  os.remove(path)
  raises(function() sst.middleware.model_call_limit{ exit_behavior = "end" } end,
         "give a thread or a run limit", "no limit")
  raises(function() sst.middleware.model_call_limit{ run_limit = 1, exit_behavior = "continue" } end,
         'exit_behavior must be "end" or "error"', "continue is for tools")
  raises(function() sst.middleware.human_in_the_loop{ interrupt_on = { echo = { allowed_decisions = { "maybe" } } } } end,
         "tool 'echo'", "a bad decision")
end)

case("summarization and fallback", function()
  local summary, p1 = scripted{ { content = "short story" } }
  local spec, p2 = scripted{ { content = "ok" } }
  local agent = sst.create_react_agent{ model = spec, middleware = {
    sst.middleware.summarization{ model = summary, trigger_tokens = 10, keep_messages = 1 } } }
  local out = agent:invoke{ messages = {
    { role = "user", content = "a long first message about many things" },
    { role = "assistant", content = "a long reply about those things" },
    { role = "user", content = "and now?" } } }
  eq(out.messages[1].content, "Here is a summary of the conversation to date:\n\nshort story", "summary")
  eq(out.messages[2].content, "and now?", "kept")
  eq(#out.messages, 3, "summary, kept, answer")
  local spent, p3 = scripted{}
  local backup, p4 = scripted{ { content = "from the backup" } }
  agent = sst.create_react_agent{ model = spent, middleware = {
    sst.middleware.model_fallback{ models = { backup }, retries = 0 } } }
  out = agent:invoke{ messages = { { role = "user", content = "?" } } }
  eq(out.messages[2].content, "from the backup", "the fallback answered")
  for _, p in ipairs{ p1, p2, p3, p4 } do os.remove(p) end
end)

local node, dir = os.getenv("SST_NODE"), os.getenv("SST_MCP_DIR")
local server = dir and (dir .. "/node_modules/@modelcontextprotocol/server-everything/dist/index.js")
local have = server and io.open(server)
if have then have:close() end
if node and have then
  case("MCP tools: the reference server over stdio", function()
    local ev = sst.mcp_tools{ command = { node, server, "stdio" }, prefix = "ev_" }
    eq(ev:server_info().name:find("everything", 1, true) ~= nil, true, "server info")
    local names = {}
    for _, t in ipairs(ev:list_tools()) do names[t.name] = true end
    check(names.echo and names["get-sum"], "echo and get-sum listed")
    eq(ev:call("echo", { message = "hi" }), "Echo: hi", "a direct call")
    local spec, path = scripted{
      { content = sst.null, tool_calls = { call("c1", "ev_get-sum", { a = 2, b = 40 }) } },
      { content = "42" },
    }
    local agent = sst.create_react_agent{ model = spec, tools = { echo, ev } }
    local out = agent:invoke{ messages = { { role = "user", content = "2 + 40?" } } }
    eq(out.messages[3].content, "The sum of 2 and 40 is 42.", "the server's tool in the agent")
    ev:close()
    raises(function() ev:list_tools() end, "the connection is closed", "closed")
    os.remove(path)
  end)
  raises(function() sst.mcp_tools{ command = { "/nonexistent/server" } } end, "No such file",
         "a command that does not exist")
  raises(function() sst.mcp_tools{} end, "give either command", "neither command nor url")
else
  io.stderr:write("test_agent.lua: MCP cases skipped (no SST_NODE/SST_MCP_DIR)\n")
end

T.finish()
-- The script loader wants a graph: a trivial one.
local g = sst.StateGraph{ done = sst.reducers.replace }
g:add_node("done", function() return { done = true } end)
g:add_edge(sst.START, "done")
return g:compile()
