-- langgraph: test_pregel.py::test_multiple_interrupts_functional_cache
-- The cache parameter (sqlite, memory; redis needs a server) is a loop over
-- sst.SqliteCache(":memory:") and sst.InMemoryCache(). CachePolicy() is
-- cache_policy = true; double.clear_cache(cache) is app:clear_task_cache("double").
local sst = superstep
local T = require("checks")
local lg = require("lg")

local caches = {
  { "sqlite", function() return sst.SqliteCache(":memory:") end },
  { "memory", function() return sst.InMemoryCache() end },
}

for _, c in ipairs(caches) do
  local what = c[1] .. " cache: "
  local counter = 0

  local double = sst.task{ cache_policy = true }(function(x)
    -- Increment the counter.
    counter = counter + 1
    return 2 * x
  end)

  local graph = sst.entrypoint{ checkpointer = sst.MemorySaver(), cache = c[2]() }(
    function(state)
      local values = {}
      for _, idx in ipairs{ 1, 1, 2, 2, 3, 3 } do
        values[#values + 1] = double(idx):result()
        values[#values + 1] = sst.interrupt({ a = "boo" })
      end
      return { values = values }
    end)

  local function run(thread_id)
    local configurable = lg.thread(thread_id)
    graph:invoke({}, configurable)
    for _, answer in ipairs{ "a", "b", "c", "d", "e" } do
      graph:invoke(sst.Command{ resume = answer }, configurable)
    end
    return graph:invoke(sst.Command{ resume = "f" }, configurable)
  end
  local expected = { values = { 2, "a", 2, "b", 4, "c", 4, "d", 6, "e", 6, "f" } }

  local result = run(c[1] .. "-1")
  -- `double` value should be cached appropriately when used w/ `interrupt`
  T.eq(result, expected, what .. "first thread")
  T.eq(counter, 3, what .. "counter after the first thread")

  -- should all be cached now
  result = run(c[1] .. "-2")
  T.eq(result, expected, what .. "second thread")
  T.eq(counter, 3, what .. "counter after the second thread")

  -- clear cache
  graph:clear_task_cache("double")

  -- should recompute now
  result = run(c[1] .. "-3")
  T.eq(result, expected, what .. "third thread")
  T.eq(counter, 6, what .. "counter after clearing the cache")
end
T.finish()
