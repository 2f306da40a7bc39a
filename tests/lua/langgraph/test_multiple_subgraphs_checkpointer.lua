-- langgraph: test_pregel.py::test_multiple_subgraphs_checkpointer
-- `stream(..., subgraphs=True)` is `stream(x, config, "updates", { subgraphs = true })`,
-- which yields `namespace, chunk` (the namespace as a list).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local sg1 = sst.StateGraph{ sub_counter = { reducer = sst.reducers.sum, default = 0 } }
sg1:add_node("subgraph_node", function() return { sub_counter = 2 } end)
sg1:add_edge(sst.START, "subgraph_node")
local sub_graph_1 = sg1:compile{ checkpointer = true }

local sg2 = sst.StateGraph{ other_sub_counter = { reducer = sst.reducers.sum, default = 0 } }
sg2:add_node("other_subgraph_node", function() return { other_sub_counter = 3 } end)
sg2:add_edge(sst.START, "other_subgraph_node")
local sub_graph_2 = sg2:compile()

local pg = sst.StateGraph{ parent_counter = sst.reducers.replace }
pg:add_node("parent_node", function(state)
  local result = sub_graph_1:invoke({ sub_counter = state.parent_counter })
  local other = sub_graph_2:invoke({ other_sub_counter = result.sub_counter })
  return { parent_counter = other.other_sub_counter }
end)
pg:add_edge(sst.START, "parent_node")
local parent_graph = pg:compile{ checkpointer = sst.MemorySaver() }

local config = lg.thread("1")
T.eq(parent_graph:invoke({ parent_counter = 0 }, config), { parent_counter = 5 }, "invoke 1")
T.eq(parent_graph:invoke({ parent_counter = 0 }, config), { parent_counter = 7 }, "invoke 2")

config = lg.thread("2")
for _, expected in ipairs({ 5, 7 }) do
  local chunks = lg.collect(parent_graph:stream({ parent_counter = 0 }, config, "updates",
                                               { subgraphs = true }))
  T.eq(#chunks, 3, "stream chunks")
  if #chunks == 3 then
    T.eq(chunks[1], { { "parent_node" }, { subgraph_node = { sub_counter = 2 } } }, "chunk 1")
    local ns = chunks[2][1]
    T.check(type(ns) == "table" and #ns == 2 and lg.any_str(ns[1])
            and ns[1]:sub(1, #"parent_node:") == "parent_node:" and ns[2] == "1",
            "chunk 2 namespace (AnyStr('parent_node:'), '1')")
    T.eq(chunks[2][2], { other_subgraph_node = { other_sub_counter = 3 } }, "chunk 2")
    T.eq(chunks[3], { sst.array{}, { parent_node = { parent_counter = expected } } }, "chunk 3")
  end
end
T.finish()
