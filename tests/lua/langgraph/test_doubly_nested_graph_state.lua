-- langgraph: test_large_cases.py::test_doubly_nested_graph_state
-- AnyStr()/AnyStr(prefix)/AnyDict() are the predicates ANY, prefix(...) and
-- ANY_MAP (a checkpoint_map holding the root "" entry) compared by like().
-- get_state(config, subgraphs=True) is get_state(config, { subgraphs = true });
-- stream(..., subgraphs=True) is stream(x, config, "updates", { subgraphs = true,
-- ... }), yielding `namespace, chunk` (the namespace as a list).
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
local ANY_PARENTS = function(v) return type(v) == "table" and lg.any_str(v[""]) end

local grandchild = sst.StateGraph{ my_key = sst.reducers.replace }
grandchild:add_node("grandchild_1", function(state) return { my_key = state.my_key .. " here" } end)
grandchild:add_node("grandchild_2", function(state) return { my_key = state.my_key .. " and there" } end)
grandchild:add_edge("grandchild_1", "grandchild_2")
grandchild:set_entry_point("grandchild_1")
grandchild:set_finish_point("grandchild_2")

local child = sst.StateGraph{ my_key = sst.reducers.replace }
child:add_node("child_1", grandchild:compile{ interrupt_before = { "grandchild_2" } })
child:set_entry_point("child_1")
child:set_finish_point("child_1")

local graph = sst.StateGraph{ my_key = sst.reducers.replace }
graph:add_node("parent_1", function(state) return { my_key = "hi " .. state.my_key } end)
graph:add_node("child", child:compile())
graph:add_node("parent_2", function(state) return { my_key = state.my_key .. " and back again" } end)
graph:set_entry_point("parent_1")
graph:add_edge("parent_1", "child")
graph:add_edge("child", "parent_2")
graph:set_finish_point("parent_2")

local app = graph:compile{ checkpointer = sst.MemorySaver() }
local opts = { subgraphs = true, durability = "exit" }

-- test invoke w/ nested interrupt
local config = lg.thread("1")
like(lg.collect(app:stream({ my_key = "my value" }, config, "updates", opts)), {
  { sst.array{}, { parent_1 = { my_key = "hi my value" } } },
  { { prefix("child:"), prefix("child_1:") }, { grandchild_1 = { my_key = "hi my value here" } } },
  { sst.array{}, { __interrupt__ = sst.array{} } },
}, "stream 1")
-- get state without subgraphs
local outer_state = app:get_state(config)
like(snap(outer_state), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child", { PULL, "child" }, { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("child") } } }) },
  next = { "child" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "outer state")
local child_state_expected = Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child_1", { PULL, "child_1" }, { state = { configurable = { thread_id = "1", checkpoint_ns = ANY } } }) },
  next = { "child_1" },
  config = { configurable = { thread_id = "1", checkpoint_ns = prefix("child:"), checkpoint_id = ANY,
                              checkpoint_map = ANY_MAP } },
  metadata = { parents = { [""] = ANY }, source = "loop", step = 0 },
  parent_config = nil,
}
local child_state = app:get_state(outer_state.tasks[1].state)
like(snap(child_state), child_state_expected, "child state")
local grandchild_expected = Snapshot{
  values = { my_key = "hi my value here" },
  tasks = { Task("grandchild_2", { PULL, "grandchild_2" }) },
  next = { "grandchild_2" },
  config = { configurable = { thread_id = "1", checkpoint_ns = ANY, checkpoint_id = ANY, checkpoint_map = ANY_MAP } },
  metadata = { parents = ANY_PARENTS, source = "loop", step = 1 },
  parent_config = nil,
}
like(snap(app:get_state(child_state.tasks[1].state)), grandchild_expected, "grandchild state")
-- get state with subgraphs
local nested_child = Snapshot{
  values = child_state_expected.values,
  tasks = { Task("child_1", { PULL, "child_1" }, { state = grandchild_expected }) },
  next = child_state_expected.next,
  config = child_state_expected.config,
  metadata = child_state_expected.metadata,
  parent_config = nil,
}
like(snap(app:get_state(config, { subgraphs = true })), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child", { PULL, "child" }, { state = nested_child }) },
  next = { "child" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "state with subgraphs")
-- # resume
like(lg.collect(app:stream(nil, config, "updates", opts)), {
  { { prefix("child:"), prefix("child_1:") }, { grandchild_2 = { my_key = "hi my value here and there" } } },
  { { prefix("child:") }, { child_1 = { my_key = "hi my value here and there" } } },
  { sst.array{}, { child = { my_key = "hi my value here and there" } } },
  { sst.array{}, { parent_2 = { my_key = "hi my value here and there and back again" } } },
}, "stream 2")
-- get state with and without subgraphs
local final = Snapshot{
  values = { my_key = "hi my value here and there and back again" },
  next = sst.array{},
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 3 },
  parent_config = root_config("1"),
}
like(snap(app:get_state(config)), final, "final state")
like(snap(app:get_state(config, { subgraphs = true })), final, "final state with subgraphs")

-- get outer graph history
local outer_history = app:get_state_history(config)
T.eq(#outer_history, 2, "outer history length")
like(snap(outer_history[1]), final, "outer history 1")
like(snap(outer_history[2]), Snapshot{
  values = { my_key = "hi my value" },
  tasks = { Task("child", { PULL, "child" }, { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("child") } } }) },
  next = { "child" },
  config = root_config("1"),
  metadata = { parents = sst.object{}, source = "loop", step = 1 },
  parent_config = nil,
}, "outer history 2")
-- get child graph history
local child_history = app:get_state_history(outer_history[2].tasks[1].state)
T.eq(#child_history, 1, "child history length")
like(snap(child_history[1]), Snapshot{
  values = { my_key = "hi my value" },
  next = { "child_1" },
  config = child_state_expected.config,
  metadata = { source = "loop", step = 0, parents = { [""] = ANY } },
  parent_config = nil,
  tasks = { Task("child_1", { PULL, "child_1" }, { state = { configurable = { thread_id = "1", checkpoint_ns = prefix("child:") } } }) },
}, "child history")
-- get grandchild graph history
local grandchild_history = app:get_state_history(child_history[1].tasks[1].state)
T.eq(#grandchild_history, 1, "grandchild history length")
like(snap(grandchild_history[1]), grandchild_expected, "grandchild history")
T.finish()
