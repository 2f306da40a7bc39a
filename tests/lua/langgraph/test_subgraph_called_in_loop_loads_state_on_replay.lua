-- langgraph: test_time_travel.py::test_subgraph_called_in_loop_loads_state_on_replay
local sst = superstep
local T = require("checks")
local lg = require("lg")

local observed = {}
local sb = sst.StateGraph{ sub_trail = { reducer = sst.reducers.append, default = sst.array{} } }
sb:add_node("sub_step", function(s)
  observed[#observed + 1] = { "sub_step", sst.to_table(s) }
  return { sub_trail = { "s" } }
end)
sb:add_edge(sst.START, "sub_step")
local sub = sb:compile{ checkpointer = true }

local g = sst.StateGraph{
  counter = sst.reducers.replace,
  results = { reducer = sst.reducers.append, default = sst.array{} },
}
g:add_node("inc", function(s)
  return { counter = s.counter + 1, results = { "inc:" .. s.counter } }
end)
g:add_node("sub_node", sub)
g:add_edge(sst.START, "inc")
g:add_edge("inc", "sub_node")
g:add_conditional_edges("sub_node", function(s)
  if s.counter < 2 then return "inc" end
  return sst.END
end, { "inc", sst.END })
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
local E = sst.array{}

-- 1st: inc -> sub -> inc -> sub -> end; the subgraph runs twice
graph:invoke({ counter = 0, results = sst.array{} }, config)
T.eq(#observed, 2, "1st: two runs")
T.eq(observed[1], { "sub_step", { sub_trail = E } }, "1st #1")
T.eq(observed[2], { "sub_step", { sub_trail = { "s" } } }, "1st #2")

observed = {}
graph:invoke({ counter = 0, results = sst.array{} }, config)
T.eq(#observed, 2, "2nd: two runs")
T.eq(observed[1], { "sub_step", { sub_trail = { "s", "s" } } }, "2nd #1")
T.eq(observed[2], { "sub_step", { sub_trail = { "s", "s", "s" } } }, "2nd #2")

-- the newest checkpoint with next == ("inc",) and counter == n
local history = graph:get_state_history(config)
local function at_inc(counter)
  for _, s in ipairs(history) do
    if sst.json_encode(s.next) == '["inc"]' and s.values.counter == counter then return s end
  end
end

-- replay from the start of the 2nd loop (counter 0)
observed = {}
graph:invoke(nil, at_inc(0).config)
T.eq(#observed, 2, "replay: two runs")
T.eq(observed[1], { "sub_step", { sub_trail = { "s", "s" } } }, "replay #1")
T.eq(observed[2], { "sub_step", { sub_trail = { "s", "s", "s" } } }, "replay #2")

-- replay from the middle of the 2nd loop (counter 1)
observed = {}
graph:invoke(nil, at_inc(1).config)
T.eq(#observed, 1, "mid-loop replay: one run")
T.eq(observed[1], { "sub_step", { sub_trail = { "s", "s", "s" } } }, "mid-loop replay")
T.finish()
