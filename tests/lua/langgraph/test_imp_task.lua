-- langgraph: test_pregel.py::test_imp_task
-- The durability parameter is a loop (a new checkpointer each time). The
-- mapper tasks run one after the other on the default single worker (the
-- counter is an upvalue); the stream is sorted as in Python.
-- Left out: get_input_jsonschema, get_output_jsonschema and
-- get_context_jsonschema (Python type hints; a superstep entrypoint declares
-- no types) and context_schema=Context, which only feeds that schema.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, durability in ipairs{ "sync", "async", "exit" } do
  local what = "durability " .. durability .. ": "
  local mapper_calls = 0

  local mapper = sst.task(function(input)
    mapper_calls = mapper_calls + 1
    sst.sleep(input / 100)
    return string.rep(tostring(input), 2)
  end)

  local graph = sst.entrypoint{ checkpointer = sst.MemorySaver() }(function(input)
    local futures = {}
    for i, x in ipairs(input) do futures[i] = mapper(x) end
    local mapped = {}
    for i, f in ipairs(futures) do mapped[i] = f:result() end
    local answer = sst.interrupt("question")
    local out = {}
    for i, m in ipairs(mapped) do out[i] = m .. answer end
    return out
  end)

  local thread1 = lg.thread("1")
  local result = lg.collect(graph:stream({ 0, 1 }, thread1, { durability = durability }))
  -- mapper tasks run concurrently so output order is non-deterministic
  local head = {}
  for i = 1, #result - 1 do head[i] = result[i] end
  table.sort(head, function(a, b) return sst.json_encode(a) < sst.json_encode(b) end)
  T.eq(head, { { mapper = "00" }, { mapper = "11" } }, what .. "task updates")
  local last = result[#result] or {}
  T.eq(lg.interrupts(last.__interrupt__, what .. "last chunk"), { lg.Interrupt("question") },
       what .. "last chunk is the interrupt")
  T.eq(mapper_calls, 2, what .. "mapper_calls after the first run")

  T.eq(graph:invoke(sst.Command{ resume = "answer" }, thread1, { durability = durability }),
       { "00answer", "11answer" }, what .. "resume")
  T.eq(mapper_calls, 2, what .. "mapper_calls after the resume")
end
T.finish()
