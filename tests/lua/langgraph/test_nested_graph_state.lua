-- langgraph: test_large_cases.py::test_nested_graph_state
-- AnyStr()/AnyStr(prefix)/AnyDict() are the predicates ANY, prefix(...) and
-- ANY_MAP (a checkpoint_map holding the root "" entry) compared by like().
-- get_state(config, subgraphs=True) is get_state(config, { subgraphs = true }).
local sst = superstep
local T = require("checks")
local lg = require("lg")
local PULL = "__pregel_pull"

-- exp may hold predicates (functions) where Python uses AnyStr()/AnyDict():
-- like() compares got with exp after replacing each matched position by "<any>".
local function norm(got, exp)
  if type(exp) == "function" then
    if exp(got) then return "<any>", "<any>" end
    return got, "<predicate>"
  end
  if type(exp) == "table" and type(got) == "table" then
    local g, e = {}, {}
    for k, v in pairs(got) do g[k] = v end
    for k, v in pairs(exp) do g[k], e[k] = norm(got[k], v) end
    setmetatable(e, getmetatable(exp)); setmetatable(g, getmetatable(got))
    return g, e
  end
  return got, exp
end
local function like(got, exp, what)
  local g, e = norm(got, exp)
  T.eq(g, e, what)
end
local ANY = function(v) return lg.any_str(v) end
local function prefix(p) return function(v) return type(v) == "string" and v:sub(1, #p) == p end end
local ANY_MAP = function(v) return type(v) == "table" and lg.any_str(v[""]) end

-- a StateSnapshot's fields (tasks as PregelTask fields, nested snapshots too)
local function snap(s)
  if type(s) ~= "table" then return s end
  local tasks = {}
  for i, t in ipairs(s.tasks or {}) do
    local st = t.state
    if type(st) == "table" and st.values ~= nil then st = snap(st) end
    tasks[i] = { id = t.id, name = t.name, path = t.path, error = t.error, interrupts = t.interrupts,
                 state = st, result = t.result }
  end
  return { values = s.values, next = s.next, tasks = tasks, config = s.config, metadata = s.metadata,
           created_at = s.created_at, parent_config = s.parent_config, interrupts = s.interrupts }
end
-- StateSnapshot(...) with LangGraph's defaults
local function Snapshot(t)
  t.created_at = t.created_at or ANY
  t.interrupts = t.interrupts or sst.array{}
  t.tasks = t.tasks or sst.array{}
  return t
end
-- PregelTask(id, name, path, ...)
local function Task(name, path, extra)
  local t = { id = ANY, name = name, path = path, interrupts = sst.array{} }
  for k, v in pairs(extra or {}) do t[k] = v end
  return t
end
local function root_config(thread_id)
  return { configurable = { thread_id = thread_id, checkpoint_ns = "", checkpoint_id = ANY } }
end

local inner = sst.StateGraph{ my_key = sst.reducers.replace, my_other_key = sst.reducers.replace }
inner:add_node("inner_1", function(state) return { my_key = state.my_key .. " here", my_other_key = state.my_key } end)
inner:add_node("inner_2", function(state) return { my_key = state.my_key .. " and there", my_other_key = state.my_key } end)
inner:add_edge("inner_1", "inner_2")
inner:set_entry_point("inner_1")
inner:set_finish_point("inner_2")

local graph = sst.StateGraph{ my_key = sst.reducers.replace, other_parent_key = sst.reducers.replace }
graph:add_node("outer_1", function(state) return { my_key = "hi " .. state.my_key } end)
graph:add_node("inner", inner:compile{ interrupt_before = { "inner_2" } })
graph:add_node("outer_2", function(state) return { my_key = state.my_key .. " and back again" } end)
graph:set_entry_point("outer_1")
graph:add_edge("outer_1", "inner")
graph:add_edge("inner", "outer_2")
graph:set_finish_point("outer_2")

local app = graph:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
app:invoke({ my_key = "my value" }, config, { durability = "exit" })
-- test state w/ nested subgraph state (right after interrupt)
-- first get_state without subgraph state
local expected = Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("inner", { PULL, "inner" }, { state = { configurable = { thread_id = "1", checkpoint_ns = ANY } } }) },
  next = { "inner" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}
like(snap(app:get_state(config)), expected, "get_state")
local history = app:get_state_history(config)
T.eq(#history, 1, "history length")
like(snap(history[1]), expected, "history")
-- now, get_state with subgraphs state
like(snap(app:get_state(config, { subgraphs = true })), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("inner", { PULL, "inner" }, { state = Snapshot{
    values = { my_key = "hi my value here", my_other_key = "hi my value" },
    tasks = { Task("inner_2", { PULL, "inner_2" }) },
    next = { "inner_2" },
    config = { configurable = { thread_id = "1", checkpoint_ns = prefix("inner:"), checkpoint_id = ANY,
                                checkpoint_map = ANY_MAP } },
    metadata = { parents = { [""] = ANY }, source = "loop", step = 1 },
    parent_config = nil,
  } }) },
  next = { "inner" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "get_state subgraphs")

-- get_state_history for a subgraph returns its checkpoints
local child_history = app:get_state_history(app:get_state(config).tasks[1].state)
T.eq(#child_history, 1, "child history length")
like(snap(child_history[1]), Snapshot{
  values = { my_key = "hi my value here", my_other_key = "hi my value" },
  next = { "inner_2" },
  config = { configurable = { thread_id = "1", checkpoint_ns = prefix("inner:"), checkpoint_id = ANY,
                              checkpoint_map = ANY_MAP } },
  metadata = { source = "loop", step = 1, parents = { [""] = ANY } },
  parent_config = nil,
  tasks = { Task("inner_2", { PULL, "inner_2" }) },
}, "child history")

-- resume
app:invoke(nil, config, { durability = "exit" })
-- test state w/ nested subgraph state (after resuming from interrupt)
local final = Snapshot{
  values = { my_key = "hi my value here and there and back again" },
  next = sst.array{},
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 3 },
  parent_config = root_config("1"),
}
like(snap(app:get_state(config)), final, "get_state after resume")
-- test full history at the end
local actual_history = app:get_state_history(config)
local expected_history = { final, Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("inner", { PULL, "inner" }, { state = { configurable = { thread_id = "1", checkpoint_ns = ANY } } }) },
  next = { "inner" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
} }
T.eq(#actual_history, #expected_history, "history length at the end")
for i, exp in ipairs(expected_history) do
  if actual_history[i] then
    like(snap(actual_history[i]), exp, "history " .. i)
    -- test looking up parent state by checkpoint ID
    like(snap(app:get_state(actual_history[i].config)), exp, "get_state by checkpoint " .. i)
  end
end
T.finish()
