-- langgraph: test_pregel.py::test_fork_and_update_task_results
-- deliberate: a Command goto replaces the node's static edges (DESIGN.md
--   semantic 5; LangGraph adds them), so node one's goto names "two" besides
--   its Send to run two twice as LangGraph does. Every tree, task and result
--   is then LangGraph's. At the end, the graph as LangGraph wrote it (goto
--   only the Send) is run too: two runs once (the Send), so each branch has
--   one "two" task and the names one "two" fewer (docs/graph.md).
-- `update_state(config, [StateUpdate(...)], "__copy__")` passes the list of
-- updates as `{ { values = ..., as_node = ... } }`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function checkpoint(values) return { "checkpoint", { values = values } } end
local function task(name, result) return { "task", { name = name, result = result } } end

-- A tree of the history, as the Python test's get_tree builds it.
local function get_tree(history)
  if #history == 0 then return sst.array{} end
  local node_map, root_nodes = {}, {}
  for i = #history, 1, -1 do
    local item = history[i]
    local id = item.config.configurable.checkpoint_id
    local pid = item.parent_config and item.parent_config.configurable.checkpoint_id
    node_map[id] = { item = item, children = {} }
    local parent = pid and node_map[pid]
    table.insert(parent and parent.children or root_nodes, node_map[id])
  end
  local function node_to_tree(node)
    local result = { checkpoint(node.item.values) }
    for _, t in ipairs(node.item.tasks or {}) do result[#result + 1] = task(t.name, t.result) end
    if #node.children > 1 then
      local branches = {}
      for i, child in ipairs(node.children) do branches[i] = node_to_tree(child) end
      result[#result + 1] = branches
    elseif #node.children == 1 then
      for _, x in ipairs(node_to_tree(node.children[1])) do result[#result + 1] = x end
    end
    return result
  end
  if #root_nodes == 1 then return node_to_tree(root_nodes[1]) end
  local branches = {}
  for i, node in ipairs(root_nodes) do branches[i] = node_to_tree(node) end
  return branches
end

local g = sst.StateGraph{
  name = {
    reducer = function(a, b) if a ~= nil and a ~= "" then return a .. " > " .. b end return b end,
    default = "",
  },
}
g:add_node("one", function()
  -- superstep's goto replaces the static edge one -> two: list "two" too, so
  -- that two runs from the edge and from the Send, as LangGraph's goto adds.
  return sst.Command{ ["goto"] = { sst.Send("two", sst.object{}), "two" }, update = { name = "one" } }
end, { ends = { "two" } })
g:add_node("two", function() return { name = "two" } end)
g:add_node("three", function() return { name = "three" } end)
g:add_edge(sst.START, "one")
g:add_edge("one", "two")
g:add_edge("two", "three")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
-- Initial run
graph:invoke({ name = "start" }, config)
local history = graph:get_state_history(config)

local function run(prefix, one)
  return {
    checkpoint({ name = prefix }),
    task("one", { name = one }),
    checkpoint({ name = prefix .. " > " .. one }),
    task("two", { name = "two" }),
    task("two", { name = "two" }),
    checkpoint({ name = prefix .. " > " .. one .. " > two > two" }),
    task("three", { name = "three" }),
    checkpoint({ name = prefix .. " > " .. one .. " > two > two > three" }),
  }
end
local function with_start(start)
  local out = { checkpoint({ name = "" }), task("__start__", { name = start }) }
  for _, x in ipairs(run(start, "one")) do out[#out + 1] = x end
  return out
end

T.eq(get_tree(history), with_start("start"), "initial tree")

-- Update the start state
graph:invoke(nil, graph:update_state(history[5].config,
                                     { { values = { name = "start*" }, as_node = "__start__" } },
                                     "__copy__"))
history = graph:get_state_history(config)
T.eq(get_tree(history), { with_start("start"), with_start("start*") }, "tree after start*")

-- Fork from task "one"
T.eq(history[4].values, { name = "start*" }, "history[3].values")
T.eq(#(history[4].tasks or {}), 1, "history[3] has one task")
T.eq(history[4].tasks and history[4].tasks[1] and history[4].tasks[1].name, "one", "history[3] task")

graph:invoke(nil, graph:update_state(history[4].config,
                                     { { values = { name = "one*" }, as_node = "one" } }, "__copy__"))
history = graph:get_state_history(config)
T.eq(get_tree(history), {
  with_start("start"),
  {
    checkpoint({ name = "" }),
    task("__start__", { name = "start*" }),
    {
      run("start*", "one"),
      {
        checkpoint({ name = "start*" }),
        task("one", { name = "one*" }),
        checkpoint({ name = "start* > one*" }),
        task("two", { name = "two" }),
        checkpoint({ name = "start* > one* > two" }),
        task("three", { name = "three" }),
        checkpoint({ name = "start* > one* > two > three" }),
      },
    },
  },
}, "tree after one*")

config = lg.thread("2")
-- Initialize the thread once again
graph:invoke({ name = "start" }, config)
history = graph:get_state_history(config)

-- Fork from task "two"
T.eq(history[3].values, { name = "start > one" }, "thread 2: history[2].values")
graph:invoke(nil, graph:update_state(history[3].config, {
  { values = { name = "two" }, as_node = "two" },
  { values = { name = "two" }, as_node = "two" },
}, "__copy__"))

local head = {
  checkpoint({ name = "" }),
  task("__start__", { name = "start" }),
  checkpoint({ name = "start" }),
  task("one", { name = "one" }),
}
local function from_two(tail)
  local out = {
    checkpoint({ name = "start > one" }),
    task("two", { name = "two" }),
    task("two", { name = "two" }),
  }
  for _, x in ipairs(tail) do out[#out + 1] = x end
  return out
end
local three = {
  checkpoint({ name = "start > one > two > two" }),
  task("three", { name = "three" }),
  checkpoint({ name = "start > one > two > two > three" }),
}
local three_star = {
  checkpoint({ name = "start > one > two > two" }),
  task("three", { name = "three*" }),
  checkpoint({ name = "start > one > two > two > three*" }),
}
local function tree(second_tail)
  local out = {}
  for i, x in ipairs(head) do out[i] = x end
  out[#out + 1] = { from_two(three), from_two(second_tail) }
  return out
end

history = graph:get_state_history(config)
T.eq(get_tree(history), tree(three), "thread 2: tree after forking two")

-- Fork task three
T.eq(history[2].values, { name = "start > one > two > two" }, "thread 2: history[1].values")
T.eq(#(history[2].tasks or {}), 1, "thread 2: history[1] has one task")
T.eq(history[2].tasks and history[2].tasks[1] and history[2].tasks[1].name, "three",
     "thread 2: history[1] task")
graph:invoke(nil, graph:update_state(history[2].config,
                                     { { values = { name = "three*" }, as_node = "three" } }, "__copy__"))
history = graph:get_state_history(config)
T.eq(get_tree(history), tree({ { three, three_star } }), "thread 2: tree after three*")

-- Regenerate task three
T.eq(history[4].values, { name = "start > one > two > two" }, "thread 2: history[3].values")
T.eq(#(history[4].tasks or {}), 1, "thread 2: history[3] has one task")
T.eq(history[4].tasks and history[4].tasks[1] and history[4].tasks[1].name, "three",
     "thread 2: history[3] task")
graph:invoke(nil, graph:update_state(history[4].config, nil, "__copy__"))
history = graph:get_state_history(config)
T.eq(get_tree(history), tree({ { three, three_star, three } }), "thread 2: tree after regenerating three")

-- The graph as LangGraph wrote it: goto only the Send, which replaces the edge one -> two.
local g2 = sst.StateGraph{
  name = {
    reducer = function(a, b) if a ~= nil and a ~= "" then return a .. " > " .. b end return b end,
    default = "",
  },
}
g2:add_node("one", function()
  return sst.Command{ ["goto"] = { sst.Send("two", sst.object{}) }, update = { name = "one" } }
end)
g2:add_node("two", function() return { name = "two" } end)
g2:add_node("three", function() return { name = "three" } end)
g2:add_edge(sst.START, "one")
g2:add_edge("one", "two")
g2:add_edge("two", "three")
local graph2 = g2:compile{ checkpointer = sst.MemorySaver() }
graph2:invoke({ name = "start" }, lg.thread("3"))
T.eq(get_tree(graph2:get_state_history(lg.thread("3"))), {
  checkpoint({ name = "" }),
  task("__start__", { name = "start" }),
  checkpoint({ name = "start" }),
  task("one", { name = "one" }),
  checkpoint({ name = "start > one" }),
  task("two", { name = "two" }),
  checkpoint({ name = "start > one > two" }),
  task("three", { name = "three" }),
  checkpoint({ name = "start > one > two > three" }),
}, "deliberate: goto replaces the edge, two runs once")
T.finish()
