-- langgraph: test_pregel.py::test_parallel_node_execution
-- deliberate: superstep runs a superstep's nodes on one worker unless
--   compile{workers = N} asks for more (deterministic, no thread per node);
--   with workers = 2 the two branches overlap as LangGraph's do.
-- script: worker states run this file again (superstep.worker), so it
--   returns its graph before the test part when loaded in one.
-- time.sleep is os.execute("sleep N"); the wall clock is read from `date`.
-- Upstream bounds the run's time (< 3.0 s for sleeps of 1 and 2 s); a wall-time
-- bound fails on a busy machine, so the overlap is shown by order instead: each
-- node marks its start (a file named in the config, seen from every worker
-- state) and, before it ends, waits for the other's mark, which a run of one
-- node after the other never gives the first.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
-- Marks this node's start, sleeps, and records whether the other node had started.
local function overlapping(ctx, me, other, secs)
  local marks = ctx.config.configurable.marks
  lg.signal(marks .. "." .. me)
  os.execute("sleep " .. secs)
  if lg.await(marks .. "." .. other, 10) then lg.signal(marks .. "." .. me .. ".saw") end
end
builder:add_node("slow", function(_, _, ctx)
  overlapping(ctx, "slow", "fast", 1)
  return { results = { "slow" } }
end)
builder:add_node("fast", function(_, _, ctx)
  overlapping(ctx, "fast", "slow", 2)
  return { results = { "fast" } }
end)
builder:add_edge(sst.START, "slow")
builder:add_edge(sst.START, "fast")
local graph = builder:compile{ workers = 2 }
if sst.worker then return graph end

local marks = lg.flag()
local result = graph:invoke({ results = sst.array{} }, { configurable = { marks = marks } })
local overlapped = lg.exists(marks .. ".slow.saw") and lg.exists(marks .. ".fast.saw")
for _, m in ipairs{ "slow", "fast", "slow.saw", "fast.saw" } do os.remove(marks .. "." .. m) end

T.check(result.results[1]:find("fast", 1, true) ~= nil, "fast first: " .. sst.json_encode(result.results))
T.check(overlapped, "parallel: each node ran while the other did")
T.finish()
return graph
