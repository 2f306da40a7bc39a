-- langgraph: test_pregel.py::test_callable_in_conditional_edges_with_no_path_map
-- Python's ChooseAnalyzer instance is a callable table.
local sst = superstep
local T = require("checks")

local workflow = sst.StateGraph{ query = sst.reducers.replace }
workflow:add_node("rewriter", function(data) return { query = "query: " .. data.query } end)
workflow:add_node("analyzer", function(data) return { query = "analyzed: " .. data.query } end)
local ChooseAnalyzer = setmetatable({}, { __call = function(self, data) return "analyzer" end })
workflow:add_conditional_edges("rewriter", ChooseAnalyzer)
workflow:set_entry_point("rewriter")
local app = workflow:compile()
T.eq(app:invoke({ query = "what is weather in sf" }), { query = "analyzed: query: what is weather in sf" }, "invoke")
T.finish()
