-- langgraph: test_pregel.py::test_parallel_node_execution
-- deliberate: superstep runs a superstep's nodes on one worker unless
--   compile{workers = N} asks for more (deterministic, no thread per node);
--   with workers = 2 the two branches overlap as LangGraph's do.
-- script: worker states run this file again (superstep.worker), so it
--   returns its graph before the test part when loaded in one.
-- time.sleep is os.execute("sleep N"); the wall clock is read from `date`.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local now = lg.now

local builder = sst.StateGraph{ results = { reducer = sst.reducers.append, default = sst.array{} } }
builder:add_node("slow", function()
  os.execute("sleep 1")
  return { results = { "slow" } }
end)
builder:add_node("fast", function()
  os.execute("sleep 2")
  return { results = { "fast" } }
end)
builder:add_edge(sst.START, "slow")
builder:add_edge(sst.START, "fast")
local graph = builder:compile{ workers = 2 }
if sst.worker then return graph end

local start = now()
local result = graph:invoke({ results = sst.array{} })
local duration = now() - start

T.check(result.results[1]:find("fast", 1, true) ~= nil, "fast first: " .. sst.json_encode(result.results))
T.check(duration < 3.0, "parallel: took " .. duration .. " s")
T.finish()
return graph
