-- langgraph: test_pregel.py::test_interrupt_loop
local sst = superstep
local T = require("checks")
local lg = require("lg")

local builder = sst.StateGraph{ age = sst.reducers.replace, other = sst.reducers.replace }
builder:add_node("node", function()
  local question = "How old are you?"
  local value = nil
  for _ = 1, 10 do
    value = sst.interrupt(question)
    if not value:match("^%d+$") or tonumber(value) < 18 then
      question = "invalid response"
      value = nil
    else
      break
    end
  end
  return { age = math.tointeger(tonumber(value)) }
end)
builder:add_edge(sst.START, "node")
local graph = builder:compile{ checkpointer = sst.MemorySaver() }
local thread1 = lg.thread("1")

local function interrupted(chunks, value, what)
  T.eq(#chunks, 1, what .. ": one chunk")
  T.eq(lg.interrupt_values(chunks[1] and chunks[1].__interrupt__, what), { value }, what)
end
interrupted(lg.collect(graph:stream({ other = "" }, thread1, "updates")), "How old are you?", "first")
interrupted(lg.collect(graph:stream(sst.Command{ resume = "13" }, thread1, "updates")), "invalid response", "13")
interrupted(lg.collect(graph:stream(sst.Command{ resume = "15" }, thread1, "updates")), "invalid response", "15")
T.eq(lg.collect(graph:stream(sst.Command{ resume = "19" }, thread1, "updates")), { { node = { age = 19 } } }, "19")
T.finish()
