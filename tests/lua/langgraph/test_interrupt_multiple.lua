-- langgraph: test_pregel.py::test_interrupt_multiple
-- A TypedDict state is closed in LangGraph (keys it does not declare are
-- dropped), as a superstep StateGraph that declares fields is by default.
-- The resume_style parameter ("null", "map") is a loop.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function concat() return { reducer = function(a, b) return a .. b end, default = "" } end

for _, resume_style in ipairs({ "null", "map" }) do
  local builder = sst.StateGraph({ my_key = concat() })
  builder:add_node("node", function()
    local answer = sst.interrupt({ value = 1 })
    local answer2 = sst.interrupt({ value = 2 })
    return { my_key = answer .. " " .. answer2 }
  end)
  builder:add_edge(sst.START, "node")
  local graph = builder:compile{ checkpointer = sst.MemorySaver() }
  local thread1 = lg.thread("1")
  local what = resume_style .. ": "

  local result = lg.collect(graph:stream({ my_key = "DE", market = "DE" }, thread1, "updates"))
  T.eq(#result, 1, what .. "first stream length")
  T.eq(lg.interrupt_values(result[1] and result[1].__interrupt__), { { value = 1 } }, what .. "first stream")

  local function resume(answer)
    if resume_style == "null" then return answer end
    local first = (result[1] and result[1].__interrupt__ or {})[1]
    return { [first and first.id or "missing interrupt id"] = answer }
  end
  result = lg.collect(graph:stream(sst.Command{ resume = resume("answer 1"), update = { my_key = " foofoo " } },
                                   thread1, "updates"))
  T.eq(#result, 1, what .. "second stream length")
  T.eq(lg.interrupt_values(result[1] and result[1].__interrupt__), { { value = 2 } }, what .. "second stream")

  T.eq(lg.collect(graph:stream(sst.Command{ resume = resume("answer 2") }, thread1, "values")), {
    { my_key = "DE foofoo " },
    { my_key = "DE foofoo answer 1 answer 2" },
  }, what .. "third stream")
  -- Added: "market" is not a channel, so the state never held it.
  T.eq(graph:get_state(thread1).values, { my_key = "DE foofoo answer 1 answer 2" }, what .. "state")
end
T.finish()
