-- langgraph: test_pregel.py::test_xray_bool
-- The snapshot (__snapshots__/test_pregel.ambr) is restated below.
local sst = superstep
local T = require("checks")

local function node(name)
  return function() return { messages = { { "human", "entered " .. name .. " node" } } } end
end
local function random_route() return tostring(math.random(0, 1)) end
local function state()
  return sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
end

local grand_parent = state()

local child = state()
child:add_node("c_one", node("c_one"))
child:add_node("c_two", node("c_two"))
child:add_edge("__start__", "c_one")
child:add_edge("c_two", "c_one")
child:add_conditional_edges("c_one", random_route, { ["0"] = "c_two", ["1"] = "__end__" })

local parent = state()
parent:add_node("p_one", node("p_one"))
parent:add_node("p_two", child:compile())
parent:add_edge("__start__", "p_one")
parent:add_edge("p_two", "p_one")
parent:add_conditional_edges("p_one", random_route, { ["0"] = "p_two", ["1"] = "__end__" })

grand_parent:add_node("gp_one", node("gp_one"))
grand_parent:add_node("gp_two", parent:compile())
grand_parent:add_edge("__start__", "gp_one")
grand_parent:add_edge("gp_two", "gp_one")
grand_parent:add_conditional_edges("gp_one", random_route, { ["0"] = "gp_two", ["1"] = "__end__" })
local app = grand_parent:compile()

T.eq(app:get_graph{ xray = true }:draw_mermaid(), table.concat({
  "---",
  "config:",
  "  flowchart:",
  "    curve: linear",
  "---",
  "graph TD;",
  "\t__start__([<p>__start__</p>]):::first",
  "\tgp_one(gp_one)",
  "\t__end__([<p>__end__</p>]):::last",
  "\t__start__ --> gp_one;",
  "\tgp_one -. &nbsp;1&nbsp; .-> __end__;",
  "\tgp_one -. &nbsp;0&nbsp; .-> gp_two\\3a__start__;",
  "\tgp_two\\3a__end__ --> gp_one;",
  "\tsubgraph gp_two",
  "\tgp_two\\3a__start__(<p>__start__</p>)",
  "\tgp_two\\3ap_one(p_one)",
  "\tgp_two\\3a__end__(<p>__end__</p>)",
  "\tgp_two\\3a__start__ --> gp_two\\3ap_one;",
  "\tgp_two\\3ap_one -. &nbsp;1&nbsp; .-> gp_two\\3a__end__;",
  "\tgp_two\\3ap_one -. &nbsp;0&nbsp; .-> gp_two\\3ap_two\\3a__start__;",
  "\tgp_two\\3ap_two\\3a__end__ --> gp_two\\3ap_one;",
  "\tsubgraph p_two",
  "\tgp_two\\3ap_two\\3a__start__(<p>__start__</p>)",
  "\tgp_two\\3ap_two\\3ac_one(c_one)",
  "\tgp_two\\3ap_two\\3ac_two(c_two)",
  "\tgp_two\\3ap_two\\3a__end__(<p>__end__</p>)",
  "\tgp_two\\3ap_two\\3a__start__ --> gp_two\\3ap_two\\3ac_one;",
  "\tgp_two\\3ap_two\\3ac_one -. &nbsp;1&nbsp; .-> gp_two\\3ap_two\\3a__end__;",
  "\tgp_two\\3ap_two\\3ac_one -. &nbsp;0&nbsp; .-> gp_two\\3ap_two\\3ac_two;",
  "\tgp_two\\3ap_two\\3ac_two --> gp_two\\3ap_two\\3ac_one;",
  "\tend",
  "\tend",
  "\tclassDef default fill:#f2f0ff,line-height:1.2",
  "\tclassDef first fill-opacity:0",
  "\tclassDef last fill:#bfb6fc",
  "",
}, "\n"), "draw_mermaid")
T.finish()
