-- langgraph: test_pregel.py::test_overwrite_parallel_error
-- as_json: both sst.Overwrite(v) and {__overwrite__ = v} are tried.
local sst = superstep
local T = require("checks")
local lg = require("lg")

for _, as_json in ipairs({ false, true }) do
  local function ow(v) return as_json and { __overwrite__ = { v } } or sst.Overwrite({ v }) end
  local g = sst.StateGraph{ messages = { reducer = sst.reducers.append, default = sst.array{} } }
  g:add_node("node_a", function() return { messages = { "a" } } end)
  g:add_node("node_b", function() return { messages = ow("b") } end)
  g:add_node("node_c", function() return { messages = ow("c") } end)
  g:add_edge(sst.START, "node_a")
  g:add_edge("node_a", "node_b")
  g:add_edge("node_a", "node_c")
  g:add_edge("node_b", sst.END)
  g:add_edge("node_c", sst.END)
  local graph = g:compile{ checkpointer = sst.MemorySaver() }
  lg.raises(function() graph:invoke({ messages = { "START" } }, lg.thread("1")) end,
            "InvalidUpdateError", "Can receive only one Overwrite value per super-step.",
            "as_json=" .. tostring(as_json))
end
T.finish()
