-- langgraph: test_time_travel.py::test_fork_creates_branch_in_subgraph
-- created_at sorts the new checkpoints as in Python (an ISO timestamp string).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sub_call_count = 0
local sb = sst.StateGraph{ sub_value = { reducer = sst.reducers.append, default = sst.array{} } }
sb:add_node("sub_step", function()
  sub_call_count = sub_call_count + 1
  return { sub_value = { "sub" .. sub_call_count } }
end)
sb:add_edge(sst.START, "sub_step")
local sub = sb:compile()

local g = sst.StateGraph{
  value = { reducer = sst.reducers.append, default = sst.array{} },
  sub_value = { reducer = sst.reducers.append, default = sst.array{} },
}
g:add_node("parent_start", function() return { value = { "p_start" } } end)
g:add_node("sub_graph", sub)
g:add_node("parent_end", function() return { value = { "p_end" } } end)
g:add_edge(sst.START, "parent_start")
g:add_edge("parent_start", "sub_graph")
g:add_edge("sub_graph", "parent_end")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local function id(s) return s.config.configurable.checkpoint_id end
local config = lg.thread("1")
local result = graph:invoke({ value = sst.array{}, sub_value = sst.array{} }, config)
T.eq(result, { value = { "p_start", "p_end" }, sub_value = { "sub1" } }, "result")

local original_history = graph:get_state_history(config)
local original_ids = {}
for _, s in ipairs(original_history) do original_ids[id(s)] = true end

local before_sub
for _, s in ipairs(original_history) do
  if sst.json_encode(s.next) == '["sub_graph"]' then before_sub = s; break end
end
local before_sub_id = id(before_sub)

local fork_config = graph:update_state(before_sub.config, { value = { "extra" } })
local fork_result = graph:invoke(nil, fork_config)
local expected = { value = { "p_start", "extra", "p_end" }, sub_value = { "sub2" } }
T.eq(fork_result, expected, "fork result")
local min_new = 3 -- the fork checkpoint + sub_graph + parent_end at least

local post_history = graph:get_state_history(config)
local post_ids = {}
for _, s in ipairs(post_history) do post_ids[id(s)] = true end
-- every original checkpoint is still there (append-only)
for cid in pairs(original_ids) do T.check(post_ids[cid], "original checkpoint " .. cid .. " kept") end
-- new checkpoints were added
local new_checkpoints = {}
for _, s in ipairs(post_history) do
  if not original_ids[id(s)] then new_checkpoints[#new_checkpoints + 1] = s end
end
T.check(#new_checkpoints >= min_new, "new checkpoints: " .. #new_checkpoints)

-- the oldest new checkpoint's parent is the branch point
table.sort(new_checkpoints, function(a, b) return a.created_at < b.created_at end)
local oldest_new = new_checkpoints[1]
T.check(oldest_new.parent_config ~= nil, "oldest new checkpoint has a parent")
T.eq(oldest_new.parent_config.configurable.checkpoint_id, before_sub_id, "branch point")

-- get_state gives the new branch tip
local latest = graph:get_state(config)
T.check(post_ids[id(latest)] and not original_ids[id(latest)], "latest is a new checkpoint")
T.eq(latest.values, expected, "latest values")
T.finish()
