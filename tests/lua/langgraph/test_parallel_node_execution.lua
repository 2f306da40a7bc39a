-- langgraph: test_pregel.py::test_parallel_node_execution
-- failing: parallel branches run one after another (workers = 1; 3.05 s, expected < 3 s)
-- time.sleep is os.execute("sleep N"); the wall clock is read from `date`.
local sst = superstep
local T = require("checks")

local function now()
  local p = io.popen("date +%s.%N")
  local t = tonumber(p:read("l"))
  p:close()
  return t
end

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
local graph = builder:compile()

local start = now()
local result = graph:invoke({ results = sst.array{} })
local duration = now() - start

T.check(result.results[1]:find("fast", 1, true) ~= nil, "fast first: " .. sst.json_encode(result.results))
T.check(duration < 3.0, "parallel: took " .. duration .. " s")
T.finish()
