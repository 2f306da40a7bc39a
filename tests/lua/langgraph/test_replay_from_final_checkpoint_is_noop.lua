-- langgraph: test_time_travel.py::test_replay_from_final_checkpoint_is_noop
local sst = superstep
local T = require("checks")
local lg = require("lg")

local called = {}
local g = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
g:add_node("node_a", function() called[#called + 1] = "node_a"; return { value = { "a" } } end)
g:add_edge(sst.START, "node_a")
local graph = g:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
T.eq(graph:invoke({ value = sst.array{} }, config), { value = { "a" } }, "result")

local state = graph:get_state(config)
T.eq(state.next, sst.array{}, "next")

called = {}
T.eq(graph:invoke(nil, state.config), { value = { "a" } }, "replay result")
T.eq(called, sst.array{}, "nothing ran")
T.finish()
