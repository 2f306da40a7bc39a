-- langgraph: test_subgraph_persistence.py::test_stateful_namespace_isolation
-- Messages are {role, content} tables; `m.text` is `m.content`. The parent's
-- checkpointer is a MemorySaver (the sync_checkpointer fixture).
local sst = superstep
local T = require("checks")

local function messages_state()
  return sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
end

local function echo(prefix)
  return function(state)
    local last = state.messages[#state.messages]
    return { messages = { { role = "assistant", content = prefix .. ": " .. last.content } } }
  end
end

local fruit_inner = messages_state()
fruit_inner:add_node("echo", echo("Fruit"))
fruit_inner:add_edge(sst.START, "echo")
fruit_inner = fruit_inner:compile()
local veggie_inner = messages_state()
veggie_inner:add_node("echo", echo("Veggie"))
veggie_inner:add_edge(sst.START, "echo")
veggie_inner = veggie_inner:compile()

-- Each wrapped in a stateful graph (checkpointer = true) under a node name of its own.
local fruit = messages_state()
fruit:add_node("fruit_agent", fruit_inner)
fruit:add_edge(sst.START, "fruit_agent")
fruit = fruit:compile{ checkpointer = true }
local veggie = messages_state()
veggie:add_node("veggie_agent", veggie_inner)
veggie:add_edge(sst.START, "veggie_agent")
veggie = veggie:compile{ checkpointer = true }

local fruit_msgs, veggie_msgs = {}, {}
local call_count = 0
local function texts(out)
  local t = {}
  for i, m in ipairs(out.messages) do t[i] = m.content end
  return t
end

local parent = sst.StateGraph{ result = sst.reducers.replace }
parent:add_node("call_both", function()
  call_count = call_count + 1
  local suffix = call_count == 1 and "round 1" or "round 2"
  local f = fruit:invoke({ messages = { { role = "user", content = "cherries " .. suffix } } })
  local v = veggie:invoke({ messages = { { role = "user", content = "broccoli " .. suffix } } })
  fruit_msgs[#fruit_msgs + 1] = texts(f)
  veggie_msgs[#veggie_msgs + 1] = texts(v)
  return { result = f.messages[#f.messages].content }
end)
parent:add_edge(sst.START, "call_both")
parent = parent:compile{ checkpointer = sst.MemorySaver() }
local config = { configurable = { thread_id = "namespace-isolation" } }

T.eq(parent:invoke({ result = "" }, config), { result = "Fruit: cherries round 1" }, "result1")
T.eq(parent:invoke({ result = "" }, config), { result = "Fruit: cherries round 2" }, "result2")

-- First call: each agent sees only its own history
T.eq(fruit_msgs[1], { "cherries round 1", "Fruit: cherries round 1" }, "fruit 1")
T.eq(veggie_msgs[1], { "broccoli round 1", "Veggie: broccoli round 1" }, "veggie 1")

-- Second call: each accumulated independently, no cross-contamination
T.eq(fruit_msgs[2], {
  "cherries round 1", "Fruit: cherries round 1", "cherries round 2", "Fruit: cherries round 2",
}, "fruit 2")
T.eq(veggie_msgs[2], {
  "broccoli round 1", "Veggie: broccoli round 1", "broccoli round 2", "Veggie: broccoli round 2",
}, "veggie 2")
T.finish()
