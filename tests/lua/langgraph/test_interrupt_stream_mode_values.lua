-- langgraph: test_pregel.py::test_interrupt_stream_mode_values
local sst = superstep
local T = require("checks")
local lg = require("lg")

-- Interrupt(value=..., id=AnyStr()): the id is checked, then compared as "ANY".
local function any_ids(chunks)
  for _, c in ipairs(chunks) do
    local list = type(c[2]) == "table" and c[2].__interrupt__
    if list then
      for i, it in ipairs(list) do
        T.check(lg.any_str(it.id), "interrupt id")
        list[i] = { value = it.value, id = "ANY" }
      end
    end
  end
  return chunks
end

local g = sst.StateGraph{ robot_input = sst.reducers.replace, human_input = sst.reducers.replace }
g:add_node("robot_input_node", function() return { robot_input = "beep boop i am a robot" } end)
g:add_node("human_input_node", function()
  local human_input = sst.interrupt("interrupt")
  return sst.Command{ update = { human_input = human_input } }
end)
g:add_edge(sst.START, "robot_input_node")
g:add_edge("robot_input_node", "human_input_node")
local app = g:compile{ checkpointer = sst.MemorySaver() }
local config = lg.thread("values-" .. tostring(os.time()))

local result = any_ids(lg.collect(app:stream(sst.object{}, config, { "updates", "values" })))
T.eq(#result, 4, "4 chunks")
local interrupt = { { value = "interrupt", id = "ANY" } }
T.eq(result, {
  { "updates", { robot_input_node = { robot_input = "beep boop i am a robot" } } },
  { "values", { robot_input = "beep boop i am a robot" } },
  { "updates", { __interrupt__ = interrupt } },
  { "values", { robot_input = "beep boop i am a robot", __interrupt__ = interrupt } },
}, "first stream")

local resume_result = lg.collect(app:stream(sst.Command{ resume = "i am a human" }, config,
                                            { "updates", "values" }))
T.eq(resume_result, {
  { "values", { robot_input = "beep boop i am a robot" } },
  { "updates", { human_input_node = { human_input = "i am a human" } } },
  { "values", { robot_input = "beep boop i am a robot", human_input = "i am a human" } },
}, "resume stream")
T.finish()
