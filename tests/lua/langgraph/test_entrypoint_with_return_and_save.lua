-- langgraph: test_pregel.py::test_entrypoint_with_return_and_save
-- entrypoint.final(value=, save=) is sst.entrypoint.final{ value =, save = }.
-- Left out: get_output_jsonschema (Python type hints).
local sst = superstep
local T = require("checks")
local lg = require("lg")

local previous_ = nil

local foo = sst.entrypoint{ name = "foo", checkpointer = sst.MemorySaver() }(function(msg, ctx)
  previous_ = sst.to_table(ctx.previous)
  local previous = {}
  if ctx.previous ~= nil and ctx.previous ~= sst.null then
    for i, v in ipairs(ctx.previous) do previous[i] = v end
  end
  local save = {}
  for i, v in ipairs(previous) do save[i] = v end
  save[#save + 1] = msg
  return sst.entrypoint.final{ value = #previous, save = save }
end)

local config = lg.thread("1")
T.eq(foo:invoke("hello", config), 0, "first invoke")
T.check(previous_ == nil, "previous_ is None, got " .. tostring(previous_))
T.eq(foo:invoke("goodbye", config), 1, "second invoke")
T.eq(previous_, { "hello" }, "previous_ after the second invoke")
T.eq(foo:invoke("definitely", config), 2, "third invoke")
T.eq(previous_, { "hello", "goodbye" }, "previous_ after the third invoke")
T.finish()
