-- langgraph: test_pregel.py::test_node_destinations
-- The get_graph().edges assertions (the drawing's edge list) are left out.
-- `destinations=` is the node option `ends` (a list, or a map of labels).
local sst = superstep
local T = require("checks")

local function concat(a, b) return (a or "") .. b end

local sb = sst.StateGraph{ foo = { reducer = concat, default = "" } }
sb:add_node("node_a", function(state)
  local value = state.foo
  local target = value == "a" and "node_b" or "node_c"
  return sst.Command{ update = { foo = value }, ["goto"] = target, graph = sst.PARENT }
end)
sb:add_edge(sst.START, "node_a")
local subgraph = sb:compile()

-- test calling subgraph inside a node function
local function call_subgraph(state) return subgraph:invoke(state) end

for _, subgraph_node in ipairs({ subgraph, call_subgraph }) do
  for _, ends in ipairs({ { "node_b", "node_c" }, { node_b = "foo", node_c = "bar" } }) do
    local b = sst.StateGraph{ foo = { reducer = concat, default = "" } }
    b:add_edge(sst.START, "child")
    b:add_node("child", subgraph_node, { ends = ends })
    b:add_node("node_b", function() return { foo = "b" } end)
    b:add_node("node_c", function() return { foo = "c" } end)
    local compiled = b:compile()
    T.eq(compiled:invoke({ foo = "" }), { foo = "c" }, "invoke")
  end
end
T.finish()
