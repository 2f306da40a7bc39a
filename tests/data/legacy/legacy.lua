-- The graph behind tests/data/legacy/v3.db: a database written by superstep
-- with schema 3 (record format 1), kept to prove newer builds read it.
--   grow  runs 70 times, appending 3 items each (a chunked snapshot at 64)
--   ask   waits for an answer (an interrupt: pending writes are stored)
local sst = superstep or require("superstep")

local graph = sst.StateGraph{
  log = { reducer = sst.reducers.append, default = {} },
  n = { reducer = sst.reducers.sum, default = 0 },
  answer = sst.reducers.replace,
}

graph:add_node("grow", function(state)
  local k = state.n
  return { n = 1, log = { "item " .. (3 * k), "item " .. (3 * k + 1), "item " .. (3 * k + 2) } }
end)

graph:add_node("ask", function(state)
  local a = sst.interrupt({ question = "done?", items = #state.log })
  return { answer = a }
end)

graph:add_edge(sst.START, "grow")
graph:add_conditional_edges("grow", function(state)
  if state.n < 70 then
    return "grow"
  end
  return "ask"
end)
graph:add_edge("ask", sst.END)

return graph:compile{ recursion_limit = 200 }
