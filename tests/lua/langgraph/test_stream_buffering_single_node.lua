-- langgraph: test_pregel.py::test_stream_buffering_single_node
-- time.sleep is os.execute("sleep N"); the wall clock is read from `date`.
-- FloatBetween(a, b) is a range check on the rounded elapsed time.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local now = lg.now
local function round1(x) return math.floor(x * 10 + 0.5) / 10 end

local builder = sst.StateGraph{ my_key = { reducer = function(a, b) return a .. b end, default = "" } }
builder:add_node("node", function(state, input, ctx)
  ctx.emit("Before sleep")
  os.execute("sleep 0.2")
  ctx.emit("After sleep")
  return { my_key = "got here" }
end)
builder:add_edge(sst.START, "node")
builder:add_edge("node", sst.END)
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local start = now()
local chunks = {}
for c in graph:stream({ my_key = "" }, lg.thread("2"), "custom") do
  chunks[#chunks + 1] = { round1(now() - start), c }
end

T.eq(#chunks, 2, "two chunks")
T.eq(chunks[1] and chunks[1][2], "Before sleep", "chunk 1")
T.check(chunks[1] and chunks[1][1] >= 0.0 and chunks[1][1] <= 0.1,
        "chunk 1 arrives before the sleep: " .. tostring(chunks[1] and chunks[1][1]))
T.eq(chunks[2] and chunks[2][2], "After sleep", "chunk 2")
T.check(chunks[2] and chunks[2][1] >= 0.2 and chunks[2][1] <= 0.3,
        "chunk 2 arrives after the sleep: " .. tostring(chunks[2] and chunks[2][1]))
T.finish()
