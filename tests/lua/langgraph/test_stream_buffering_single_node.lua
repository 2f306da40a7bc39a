-- langgraph: test_pregel.py::test_stream_buffering_single_node
-- time.sleep is os.execute("sleep N"); the wall clock is read from `date`.
-- Upstream bounds when each chunk arrives (FloatBetween(0.0, 0.1), (0.2, 0.3));
-- wall-time upper bounds fail on a busy machine, so the first chunk is shown to
-- arrive before the sleep by order instead: the node waits for the reader to
-- have seen it (lg.await) before it sleeps, and the reader checks that the node
-- has not gone past its sleep. The lower bound (0.2 s) stays.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local now = lg.now
local seen, past = lg.flag(), lg.flag()

local builder = sst.StateGraph{ my_key = { reducer = function(a, b) return a .. b end, default = "" } }
builder:add_node("node", function(state, input, ctx)
  ctx.emit("Before sleep")
  lg.await(seen, 10) -- a buffered stream shows nothing before the node ends
  os.execute("sleep 0.2")
  lg.signal(past)
  ctx.emit("After sleep")
  return { my_key = "got here" }
end)
builder:add_edge(sst.START, "node")
builder:add_edge("node", sst.END)
local graph = builder:compile{ checkpointer = sst.MemorySaver() }

local start = now()
local chunks = {}
local early = nil
for c in graph:stream({ my_key = "" }, lg.thread("2"), "custom") do
  chunks[#chunks + 1] = { now() - start, c }
  if #chunks == 1 then
    early = not lg.exists(past)
    lg.signal(seen)
  end
end
os.remove(seen)
os.remove(past)

T.eq(#chunks, 2, "two chunks")
T.eq(chunks[1] and chunks[1][2], "Before sleep", "chunk 1")
T.check(early == true, "chunk 1 arrives before the sleep (while the node still runs)")
T.eq(chunks[2] and chunks[2][2], "After sleep", "chunk 2")
T.check(chunks[2] and chunks[2][1] >= 0.2, "chunk 2 arrives after the sleep: " .. tostring(chunks[2] and chunks[2][1]))
T.finish()
