-- langgraph: test_pregel.py::test_empty_invoke
-- The Python state is a pydantic model invoked with an empty instance; here
-- the plain-dict variant is invoked with an empty object (the defaults
-- written out). The in-place `state.x1.append` of a pydantic model has no
-- Lua meaning (the state is read-only) and is left out.
local sst = superstep
local T = require("checks")

local function reducer_merge_dicts(d1, d2)
  local merged = {}
  for k, v in pairs(d1 or {}) do merged[k] = v end
  for k, v in pairs(d2 or {}) do merged[k] = v end
  return sst.object(merged)
end

local g = sst.StateGraph{
  x1 = { reducer = sst.reducers.append, default = sst.array{} },
  x2 = { reducer = reducer_merge_dicts, default = sst.object{} },
}
g:add_node("x1_1_node", function() return { x1 = { "111" } } end)
g:add_node("x1_2_node", function() return { x1 = { "222" } } end)
g:add_node("x2_1_node", function() return { x2 = { ["111"] = 111 } } end)
g:add_node("x2_2_node", function() return { x2 = { ["222"] = 222 } } end)
g:add_edge("x1_1_node", "x1_2_node")
g:add_edge("x1_2_node", "x2_1_node")
g:add_edge("x2_1_node", "x2_2_node")
g:add_edge(sst.START, "x1_1_node")
g:add_edge("x2_2_node", sst.END)
local compiled = g:compile()

T.eq(compiled:invoke(sst.object{}).x2, { ["111"] = 111, ["222"] = 222 }, "x2")
T.finish()
