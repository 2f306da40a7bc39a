-- langgraph: test_pregel.py::test_invoke_two_processes_two_in_two_out_invalid
-- Only the StateGraph half is ported (the first half uses the low-level
-- Pregel/NodeBuilder API). `hello: str` written by two nodes in one step is
-- `sst.reducers.unique` (README). debug=True is left out.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function my_node() return { hello = "world" } end
local builder = sst.StateGraph{ hello = sst.reducers.unique }
builder:add_node("one", my_node)
builder:add_node("two", my_node)
builder:set_conditional_entry_point(function() return { "one", "two" } end)
local graph = builder:compile()
lg.raises(function() graph:invoke({ hello = "there" }) end, "InvalidUpdateError", "'hello'", "two writers")
T.finish()
