-- langgraph: test_pregel.py::test_multiple_sinks_subgraphs
-- The snapshot (__snapshots__/test_pregel.ambr) is restated below.
local sst = superstep
local T = require("checks")

local function state()
  return sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
end
local function identity() end

local subgraph_builder = state()
subgraph_builder:add_node("one", identity)
subgraph_builder:add_node("two", identity)
subgraph_builder:add_node("three", identity)
subgraph_builder:add_edge("__start__", "one")
subgraph_builder:add_conditional_edges("one", function() return "two" end, { "two", "three" })
local subgraph = subgraph_builder:compile()

local builder = state()
builder:add_node("uno", identity)
builder:add_node("dos", identity)
builder:add_node("subgraph", subgraph)
builder:add_edge("__start__", "uno")
builder:add_conditional_edges("uno", function() return "dos" end, { "dos", "subgraph" })
local app = builder:compile()

T.eq(app:get_graph{ xray = true }:draw_mermaid(), table.concat({
  "---",
  "config:",
  "  flowchart:",
  "    curve: linear",
  "---",
  "graph TD;",
  "\t__start__([<p>__start__</p>]):::first",
  "\tuno(uno)",
  "\tdos(dos)",
  "\t__end__([<p>__end__</p>]):::last",
  "\t__start__ --> uno;",
  "\tuno -.-> dos;",
  "\tuno -.-> subgraph\\3aone;",
  "\tdos --> __end__;",
  "\tsubgraph\\3a__end__ --> __end__;",
  "\tsubgraph subgraph",
  "\tsubgraph\\3aone(one)",
  "\tsubgraph\\3atwo(two)",
  "\tsubgraph\\3athree(three)",
  "\tsubgraph\\3a__end__(<p>__end__</p>)",
  "\tsubgraph\\3aone -.-> subgraph\\3athree;",
  "\tsubgraph\\3aone -.-> subgraph\\3atwo;",
  "\tsubgraph\\3athree --> subgraph\\3a__end__;",
  "\tsubgraph\\3atwo --> subgraph\\3a__end__;",
  "\tend",
  "\tclassDef default fill:#f2f0ff,line-height:1.2",
  "\tclassDef first fill-opacity:0",
  "\tclassDef last fill:#bfb6fc",
  "",
}, "\n"), "draw_mermaid")
T.finish()
