-- langgraph: test_pregel.py::test_double_interrupt_subgraph
local sst = superstep
local T = require("checks")
local lg = require("lg")

local subgraph_builder = sst.StateGraph{ input = sst.reducers.replace }
subgraph_builder:add_node("node_1", function() return { input = sst.interrupt("interrupt node 1") } end)
subgraph_builder:add_node("node_2", function() return { input = sst.interrupt("interrupt node 2") } end)
subgraph_builder:add_edge(sst.START, "node_1")
subgraph_builder:add_edge("node_1", "node_2")
subgraph_builder:add_edge("node_2", sst.END)

local function interrupted(chunk, value, what)
  T.eq(lg.interrupt_values(chunk and chunk.__interrupt__, what), { value }, what)
end

-- invoke the sub graph
local saver = sst.MemorySaver()
local subgraph = subgraph_builder:compile{ checkpointer = saver }
local thread = lg.thread("double-interrupt-a")
local chunks = lg.collect(subgraph:stream({ input = "test" }, thread, "updates"))
T.eq(#chunks, 1, "sub 1 length")
interrupted(chunks[1], "interrupt node 1", "sub 1")
chunks = lg.collect(subgraph:stream(sst.Command{ resume = "123" }, thread, "updates"))
T.eq(#chunks, 2, "sub 2 length")
T.eq(chunks[1], { node_1 = { input = "123" } }, "sub 2 chunk 1")
interrupted(chunks[2], "interrupt node 2", "sub 2 chunk 2")
T.eq(lg.collect(subgraph:stream(sst.Command{ resume = "123" }, thread, "updates")),
     { { node_2 = { input = "123" } } }, "sub 3")

subgraph = subgraph_builder:compile()
thread = lg.thread("double-interrupt-b")
local parent = sst.StateGraph{ input = sst.reducers.replace }
parent:add_node("invoke_sub_agent", function(state) return subgraph:invoke(state) end)
parent:add_edge(sst.START, "invoke_sub_agent")
parent:add_edge("invoke_sub_agent", sst.END)
local parent_agent = parent:compile{ checkpointer = saver }

chunks = lg.collect(parent_agent:stream({ input = "test" }, thread, "updates"))
T.eq(#chunks, 1, "parent 1 length")
interrupted(chunks[1], "interrupt node 1", "parent 1")
chunks = lg.collect(parent_agent:stream(sst.Command{ resume = true }, thread, "updates"))
T.eq(#chunks, 1, "parent 2 length")
interrupted(chunks[1], "interrupt node 2", "parent 2")
T.eq(lg.collect(parent_agent:stream(sst.Command{ resume = true }, thread, "updates")),
     { { invoke_sub_agent = { input = true } } }, "parent 3")
T.finish()
