-- langgraph: test_pregel.py::test_multistep_plan
-- Messages are superstep's OpenAI-shaped objects (role "user" for a human
-- message); ids are checked with lg.any_str and dropped.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{
  plan = sst.reducers.replace,
  messages = { reducer = sst.reducers.add_messages, default = sst.array{} },
}
local function rest(list)
  local out = sst.array{}
  for i = 2, #list do out[#out + 1] = list[i] end
  return out
end
builder:add_node("planner", function(state)
  if state.plan == nil then
    local plan = { "step1", { "step2", "step3" }, "step4" }
    return sst.Command{ ["goto"] = plan[1], update = { plan = rest(plan) } }
  elseif #state.plan > 0 then
    local plan = sst.to_table(state.plan)
    return sst.Command{ ["goto"] = plan[1], update = { plan = rest(plan) } }
  end
end, { ends = { "step1", "step2", "step3", "step4" } })
for _, name in ipairs({ "step1", "step2", "step3", "step4" }) do
  builder:add_node(name, function()
    return sst.Command{ ["goto"] = "planner", update = { messages = { { "human", name } } } }
  end, { ends = { "planner" } })
end
builder:add_edge(sst.START, "planner")
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local result = graph:invoke({ messages = { { "human", "start" } } }, config)
local contents = {}
for i, m in ipairs(result.messages or {}) do
  T.check(lg.any_str(m.id), "message " .. i .. " id")
  T.eq(m.role, "user", "message " .. i .. " role")
  contents[i] = m.content
end
T.eq(contents, { "start", "step1", "step2", "step3", "step4" }, "messages")
T.eq(result.plan, sst.array{}, "plan")
T.finish()
