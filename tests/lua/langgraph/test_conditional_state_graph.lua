-- langgraph: test_large_cases.py::test_conditional_state_graph
-- The JSON-schema, graph JSON and drawing snapshots and debug=True are left out.
-- The prompt | FakeStreamingListLLM | parser chain is a Lua node that returns
-- the scripted responses in turn (cycling like the fake LLM); AgentAction and
-- AgentFinish are tables with their fields. `input: Annotated[str,
-- UntrackedValue]` is written { untracked = true } and the node input_schema
-- (ToolState) is the node option input_schema = { "agent_outcome" }.
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = "__pregel_pull"

local task = lg.task
local snap_eq = lg.snap_eq

local function action(tool, tool_input, log) return { tool = tool, tool_input = tool_input, log = log } end
local function finish(answer, log) return { return_values = { answer = answer }, log = log } end

local tools = { search_api = function(query) return "result for " .. query end }

local responses = { "tool:search_api:query", "tool:search_api:another", "finish:answer" }
local llm_i = 0
local function agent(s)
  local input = responses[llm_i + 1]
  llm_i = (llm_i + 1) % #responses
  if input:sub(1, 6) == "finish" then
    local answer = input:match("^[^:]*:(.*)$")
    return { agent_outcome = finish(answer, input) }
  end
  local tool_name, tool_input = input:match("^[^:]*:([^:]*):(.*)$")
  return { agent_outcome = action(tool_name, tool_input, input) }
end

local function execute_tools(data)
  T.check(data.input == nil, "input not in data")
  T.check(data.intermediate_steps == nil, "intermediate_steps not in data")
  local agent_action = sst.to_table(data.agent_outcome)
  local observation = tools[agent_action.tool](agent_action.tool_input)
  return { intermediate_steps = { { agent_action, observation } } }
end

local function should_continue(data)
  if data.agent_outcome.return_values ~= nil then return "exit" end
  return "continue"
end

local workflow = sst.StateGraph{
  input = { reducer = sst.reducers.replace, untracked = true },
  agent_outcome = sst.reducers.replace,
  intermediate_steps = { reducer = sst.reducers.append, default = sst.array{} },
}
workflow:add_node("agent", agent)
workflow:add_node("tools", execute_tools, { input_schema = { "agent_outcome" } })
workflow:set_entry_point("agent")
workflow:add_conditional_edges("agent", should_continue, { continue = "tools", exit = sst.END })
workflow:add_edge("tools", "agent")

local app = workflow:compile()

T.eq(app:invoke({ input = "what is weather in sf" }), {
  input = "what is weather in sf",
  intermediate_steps = {
    { action("search_api", "query", "tool:search_api:query"), "result for query" },
    { action("search_api", "another", "tool:search_api:another"), "result for another" },
  },
  agent_outcome = finish("answer", "finish:answer"),
}, "invoke")

T.eq(lg.collect(app:stream({ input = "what is weather in sf" }, nil, "updates")), {
  { agent = { agent_outcome = action("search_api", "query", "tool:search_api:query") } },
  { tools = { intermediate_steps = { { action("search_api", "query", "tool:search_api:query"), "result for query" } } } },
  { agent = { agent_outcome = action("search_api", "another", "tool:search_api:another") } },
  { tools = { intermediate_steps = { { action("search_api", "another", "tool:search_api:another"), "result for another" } } } },
  { agent = { agent_outcome = finish("answer", "finish:answer") } },
}, "stream")

local INTERRUPT = { __interrupt__ = sst.array{} }
local function exit_config(config)
  return { configurable = config.configurable, durability = "exit" }
end
local function parent_of(app_, config) return app_:get_state_history(config, { limit = 2 })[2].config end

-- test state get/update methods with interrupt_after

local app_w_interrupt = workflow:compile{ checkpointer = sst.MemorySaver(), interrupt_after = { "agent" } }
local config = lg.thread("1")

T.eq(lg.collect(app_w_interrupt:stream({ input = "what is weather in sf" }, exit_config(config), "updates")), {
  { agent = { agent_outcome = action("search_api", "query", "tool:search_api:query") } },
  INTERRUPT,
}, "after: stream 1")

snap_eq(app_w_interrupt:get_state(config), {
  values = { agent_outcome = action("search_api", "query", "tool:search_api:query"), intermediate_steps = sst.array{} },
  tasks = { task("tools") }, next = { "tools" }, thread_id = "1",
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "after: state 1")

app_w_interrupt:update_state(config, { agent_outcome = action("search_api", "query", "tool:search_api:a different query") })

snap_eq(app_w_interrupt:get_state(config), {
  values = { agent_outcome = action("search_api", "query", "tool:search_api:a different query"), intermediate_steps = sst.array{} },
  tasks = { task("tools") }, next = { "tools" }, thread_id = "1",
  metadata = { parents = sst.object{}, source = "update", step = 2 },
  parent_config = parent_of(app_w_interrupt, config),
}, "after: state 2")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { tools = { intermediate_steps = { { action("search_api", "query", "tool:search_api:a different query"), "result for query" } } } },
  { agent = { agent_outcome = action("search_api", "another", "tool:search_api:another") } },
  INTERRUPT,
}, "after: stream 2")

app_w_interrupt:update_state(config, { agent_outcome = finish("a really nice answer", "finish:a really nice answer") })

snap_eq(app_w_interrupt:get_state(config), {
  values = {
    agent_outcome = finish("a really nice answer", "finish:a really nice answer"),
    intermediate_steps = { { action("search_api", "query", "tool:search_api:a different query"), "result for query" } },
  },
  tasks = sst.array{}, next = sst.array{}, thread_id = "1",
  metadata = { parents = sst.object{}, source = "update", step = 5 },
  parent_config = parent_of(app_w_interrupt, config),
}, "after: state 3")

-- test state get/update methods with interrupt_before

app_w_interrupt = workflow:compile{ checkpointer = sst.MemorySaver(), interrupt_before = { "tools" } }
config = lg.thread("2")
llm_i = 0 -- reset the llm

T.eq(lg.collect(app_w_interrupt:stream({ input = "what is weather in sf" }, exit_config(config), "updates")), {
  { agent = { agent_outcome = action("search_api", "query", "tool:search_api:query") } },
  INTERRUPT,
}, "before: stream 1")

snap_eq(app_w_interrupt:get_state(config), {
  values = { agent_outcome = action("search_api", "query", "tool:search_api:query"), intermediate_steps = sst.array{} },
  tasks = { task("tools") }, next = { "tools" }, thread_id = "2",
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "before: state 1")

app_w_interrupt:update_state(config, { agent_outcome = action("search_api", "query", "tool:search_api:a different query") })

snap_eq(app_w_interrupt:get_state(config), {
  values = { agent_outcome = action("search_api", "query", "tool:search_api:a different query"), intermediate_steps = sst.array{} },
  tasks = { task("tools") }, next = { "tools" }, thread_id = "2",
  metadata = { parents = sst.object{}, source = "update", step = 2 },
  parent_config = parent_of(app_w_interrupt, config),
}, "before: state 2")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { tools = { intermediate_steps = { { action("search_api", "query", "tool:search_api:a different query"), "result for query" } } } },
  { agent = { agent_outcome = action("search_api", "another", "tool:search_api:another") } },
  INTERRUPT,
}, "before: stream 2")

app_w_interrupt:update_state(config, { agent_outcome = finish("a really nice answer", "finish:a really nice answer") })

snap_eq(app_w_interrupt:get_state(config), {
  values = {
    agent_outcome = finish("a really nice answer", "finish:a really nice answer"),
    intermediate_steps = { { action("search_api", "query", "tool:search_api:a different query"), "result for query" } },
  },
  tasks = sst.array{}, next = sst.array{}, thread_id = "2",
  metadata = { parents = sst.object{}, source = "update", step = 5 },
  parent_config = parent_of(app_w_interrupt, config),
}, "before: state 3")

-- test w interrupt before all

app_w_interrupt = workflow:compile{ checkpointer = sst.MemorySaver(), interrupt_before = "*" }
config = lg.thread("3")
llm_i = 0 -- reset the llm

T.eq(lg.collect(app_w_interrupt:stream({ input = "what is weather in sf" }, exit_config(config), "updates")),
     { INTERRUPT }, "before all: stream 1")

snap_eq(app_w_interrupt:get_state(config), {
  values = { intermediate_steps = sst.array{} },
  tasks = { task("agent") }, next = { "agent" }, thread_id = "3",
  metadata = { parents = sst.object{}, source = "loop", step = 0 },
  parent_config = nil,
}, "before all: state 1")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { agent = { agent_outcome = action("search_api", "query", "tool:search_api:query") } },
  INTERRUPT,
}, "before all: stream 2")

snap_eq(app_w_interrupt:get_state(config), {
  values = { agent_outcome = action("search_api", "query", "tool:search_api:query"), intermediate_steps = sst.array{} },
  tasks = { task("tools") }, next = { "tools" }, thread_id = "3",
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = parent_of(app_w_interrupt, config),
}, "before all: state 2")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { tools = { intermediate_steps = { { action("search_api", "query", "tool:search_api:query"), "result for query" } } } },
  INTERRUPT,
}, "before all: stream 3")

snap_eq(app_w_interrupt:get_state(config), {
  values = {
    agent_outcome = action("search_api", "query", "tool:search_api:query"),
    intermediate_steps = { { action("search_api", "query", "tool:search_api:query"), "result for query" } },
  },
  tasks = { task("agent") }, next = { "agent" }, thread_id = "3",
  metadata = { parents = sst.object{}, source = "loop", step = 2 },
  parent_config = parent_of(app_w_interrupt, config),
}, "before all: state 3")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { agent = { agent_outcome = action("search_api", "another", "tool:search_api:another") } },
  INTERRUPT,
}, "before all: stream 4")

-- test w interrupt after all

app_w_interrupt = workflow:compile{ checkpointer = sst.MemorySaver(), interrupt_after = "*" }
config = lg.thread("4")
llm_i = 0 -- reset the llm

T.eq(lg.collect(app_w_interrupt:stream({ input = "what is weather in sf" }, exit_config(config), "updates")), {
  { agent = { agent_outcome = action("search_api", "query", "tool:search_api:query") } },
  INTERRUPT,
}, "after all: stream 1")

snap_eq(app_w_interrupt:get_state(config), {
  values = { agent_outcome = action("search_api", "query", "tool:search_api:query"), intermediate_steps = sst.array{} },
  tasks = { task("tools") }, next = { "tools" }, thread_id = "4",
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "after all: state 1")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { tools = { intermediate_steps = { { action("search_api", "query", "tool:search_api:query"), "result for query" } } } },
  INTERRUPT,
}, "after all: stream 2")

snap_eq(app_w_interrupt:get_state(config), {
  values = {
    agent_outcome = action("search_api", "query", "tool:search_api:query"),
    intermediate_steps = { { action("search_api", "query", "tool:search_api:query"), "result for query" } },
  },
  tasks = { task("agent") }, next = { "agent" }, thread_id = "4",
  metadata = { parents = sst.object{}, source = "loop", step = 2 },
  parent_config = parent_of(app_w_interrupt, config),
}, "after all: state 2")

T.eq(lg.collect(app_w_interrupt:stream(nil, config, "updates")), {
  { agent = { agent_outcome = action("search_api", "another", "tool:search_api:another") } },
  INTERRUPT,
}, "after all: stream 3")
T.finish()
