-- langgraph: test_pregel.py::test_imp_nested
-- The durability parameter is a loop (a new checkpointer each time).
-- StateGraph(list[str]) is a root state (sst.StateGraph(sst.reducers.replace)).
-- Left out: get_input_jsonschema and get_output_jsonschema (Python type
-- hints; a superstep entrypoint declares no types).
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs{ "sync", "async", "exit" } do
  local what = "durability " .. durability .. ": "

  local builder = sst.StateGraph(sst.reducers.replace)
  builder:add_node("mynode", function(input)
    local out = {}
    for i, it in ipairs(input) do out[i] = it .. "a" end
    return out
  end)
  builder:add_edge(sst.START, "mynode")
  local add_a = builder:compile()

  local submapper = sst.task(function(input)
    sst.sleep(input / 100)
    return tostring(input)
  end)

  local mapper = sst.task(function(input)
    local sub = submapper(input)
    sst.sleep(input / 100)
    return string.rep(sub:result(), 2)
  end)

  local graph = sst.entrypoint{ checkpointer = sst.MemorySaver() }(function(input)
    local futures = {}
    for i, x in ipairs(input) do futures[i] = mapper(x) end
    local mapped = {}
    for i, f in ipairs(futures) do mapped[i] = f:result() end
    local answer = sst.interrupt("question")
    local final = {}
    for i, m in ipairs(mapped) do final[i] = m .. answer end
    return add_a:invoke(final)
  end)

  local thread1 = lg.thread("1")
  local result = lg.collect(graph:stream({ 0, 1 }, thread1, { durability = durability }))
  -- nested tasks run concurrently so output order is non-deterministic
  local head = {}
  for i = 1, #result - 1 do head[i] = result[i] end
  table.sort(head, function(a, b) return sst.json_encode(a) < sst.json_encode(b) end)
  T.eq(head, {
    { mapper = "00" },
    { mapper = "11" },
    { submapper = "0" },
    { submapper = "1" },
  }, what .. "task updates")
  local last = result[#result] or {}
  T.eq(lg.interrupts(last.__interrupt__, what .. "last chunk"), { lg.Interrupt("question") },
       what .. "last chunk is the interrupt")

  T.eq(graph:invoke(sst.Command{ resume = "answer" }, thread1, { durability = durability }),
       { "00answera", "11answera" }, what .. "resume")
end
T.finish()
