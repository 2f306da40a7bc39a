-- langgraph: test_pregel.py::test_invalid_checkpointer_type
-- Python's TypeError has no entry in lg.kinds: the error is checked by its
-- text; a plain table stands for NotACheckpointer().
local sst = superstep
local T = require("checks")

local builder = sst.StateGraph{ foo = sst.reducers.replace }
builder:add_node("start", function(state) return state end)
builder:set_entry_point("start")
builder:set_finish_point("start")

local NotACheckpointer = {}
T.raises(function() builder:compile{ checkpointer = NotACheckpointer } end,
         "checkpointer", "Invalid checkpointer provided")
T.finish()
