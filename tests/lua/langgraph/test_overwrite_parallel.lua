-- langgraph: test_pregel.py::test_overwrite_parallel
-- as_json: both sst.Overwrite(v) and {__overwrite__ = v} are tried.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, as_json in ipairs({ false, true }) do
  local g = sst.StateGraph{ messages = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("node_a", function() return { messages = { "a" } } end)
  g:add_node("node_b", function()
    local overwrite = as_json and { __overwrite__ = { "b" } } or sst.Overwrite({ "b" })
    return { messages = overwrite }
  end)
  g:add_node("node_c", function() return { messages = { "c" } } end)
  g:add_node("node_d", function() return { messages = { "d" } } end)
  g:add_edge(sst.START, "node_a")
  g:add_edge("node_a", "node_b")
  g:add_edge("node_a", "node_c")
  g:add_edge("node_b", "node_d")
  g:add_edge("node_c", "node_d")
  local graph = g:compile{ checkpointer = sst.MemorySaver() }
  local ok, result = pcall(graph.invoke, graph, { messages = { "START" } }, lg.thread("1"))
  T.check(ok, "as_json=" .. tostring(as_json) .. ": invoke: " .. tostring(result))
  -- a, c are overwritten by b, then d is written
  if ok then T.eq(result, { messages = { "b", "d" } }, "as_json=" .. tostring(as_json)) end
end
T.finish()
