-- langgraph: test_time_travel.py::test_replay_creates_branch_preserving_old_checkpoints
-- created_at sorts the new checkpoints as in Python (an ISO timestamp string).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local call_count = 0
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() return { value = { "a" } } end)
g:add_node("node_b", function()
  call_count = call_count + 1
  return { value = { "b" .. call_count } }
end)
g:add_node("node_c", function() return { value = { "c" } } end)
g:add_edge(sst.START, "node_a")
g:add_edge("node_a", "node_b")
g:add_edge("node_b", "node_c")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local E = sst.array{}
local function nexts(h) local o = {} for i, s in ipairs(h) do o[i] = s.next end return o end
local function values(h) local o = {} for i, s in ipairs(h) do o[i] = s.values end return o end
local function id(s) return s.config.configurable.checkpoint_id end

local config = lg.thread("1")
T.eq(graph:invoke({ value = sst.array{} }, config), { value = { "a", "b1", "c" } }, "result")

-- original history (newest first)
local original_history = graph:get_state_history(config)
T.eq(#original_history, 5, "original length")
T.eq(nexts(original_history), { E, { "node_c" }, { "node_b" }, { "node_a" }, { "__start__" } }, "original next")
T.eq(values(original_history), {
  { value = { "a", "b1", "c" } },
  { value = { "a", "b1" } },
  { value = { "a" } },
  { value = E },
  { value = E },
}, "original values")
local original_ids = {}
for _, s in ipairs(original_history) do original_ids[id(s)] = true end

local before_b
for _, s in ipairs(original_history) do
  if sst.json_encode(s.next) == '["node_b"]' then before_b = s; break end
end
local before_b_id = id(before_b)
-- replay from the checkpoint before node_b
local replay_result = graph:invoke(nil, before_b.config)
T.eq(replay_result, { value = { "a", "b2", "c" } }, "replay result")

-- history after the replay: 5 original + 1 fork + 2 new = 8
local post_history = graph:get_state_history(config)
T.eq(#post_history, 8, "length after the replay")
T.eq(nexts(post_history), {
  E,             -- new branch tip
  { "node_c" },  -- new branch
  { "node_b" },  -- fork from the replay point
  E,             -- old branch tip
  { "node_c" },  -- old
  { "node_b" },  -- branch point (C2)
  { "node_a" },  -- old (C1)
  { "__start__" }, -- old (C0)
}, "next after the replay")
T.eq(values(post_history), {
  { value = { "a", "b2", "c" } },
  { value = { "a", "b2" } },
  { value = { "a" } },
  { value = { "a", "b1", "c" } },
  { value = { "a", "b1" } },
  { value = { "a" } },
  { value = E },
  { value = E },
}, "values after the replay")

-- every original checkpoint is still there (append-only)
local post_ids = {}
for _, s in ipairs(post_history) do post_ids[id(s)] = true end
for cid in pairs(original_ids) do T.check(post_ids[cid], "original checkpoint " .. cid .. " kept") end

-- the oldest new checkpoint's parent is the branch point
local new_checkpoints = {}
for _, s in ipairs(post_history) do
  if not original_ids[id(s)] then new_checkpoints[#new_checkpoints + 1] = s end
end
table.sort(new_checkpoints, function(a, b) return a.created_at < b.created_at end)
local oldest_new = new_checkpoints[1]
T.check(oldest_new.parent_config ~= nil, "oldest new checkpoint has a parent")
T.eq(oldest_new.parent_config.configurable.checkpoint_id, before_b_id, "branch point")

-- get_state gives the new branch tip
local latest = graph:get_state(config)
T.eq(latest.values, { value = { "a", "b2", "c" } }, "latest values")
T.check(not original_ids[id(latest)], "latest is a new checkpoint")
T.finish()
