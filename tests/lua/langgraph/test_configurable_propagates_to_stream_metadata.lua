-- langgraph: test_pregel.py::test_configurable_propagates_to_stream_metadata
-- A "messages" chunk is LangGraph's (message, metadata) tuple: the list
-- { message, metadata }. HumanMessage(content=...) is { role = "user", content = ... }.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
g:add_node("my_node", function() return { messages = { role = "user", content = "hello" } } end)
g:add_edge(sst.START, "my_node")
local graph = g:compile()

local config = {
  configurable = {
    thread_id = "th-123",
    checkpoint_id = "ckpt-1",
    checkpoint_ns = "ns-1",
    task_id = "task-1",
    run_id = "run-456",
    assistant_id = "asst-789",
    graph_id = "graph-0",
    model = "gpt-4o",
    user_id = "uid-1",
    cron_id = "cron-1",
    langgraph_auth_user_id = "user-1",
    -- these should NOT be propagated into metadata
    some_api_key = "secret",
    custom_setting = { nested = true },
  },
}
local ok, results = pcall(lg.collect, graph:stream({ messages = sst.array{} }, config, "messages"))
T.check(ok, "stream: " .. tostring(results))
if ok then
  T.eq(#results, 1, "one message chunk")
  local metadata = results[1] and type(results[1]) == "table" and results[1][2] or {}
  T.eq(metadata.thread_id, "th-123", "thread_id")
  T.eq(metadata.checkpoint_id, "ckpt-1", "checkpoint_id")
  T.eq(metadata.checkpoint_ns, "ns-1", "checkpoint_ns")
  T.eq(metadata.task_id, "task-1", "task_id")
  T.eq(metadata.run_id, "run-456", "run_id")
  T.eq(metadata.assistant_id, "asst-789", "assistant_id")
  T.eq(metadata.graph_id, "graph-0", "graph_id")
  T.check(metadata.some_api_key == nil, "some_api_key not in metadata")
  T.check(metadata.custom_setting == nil, "custom_setting not in metadata")
end
T.finish()
