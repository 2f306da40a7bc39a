-- langgraph: test_pregel.py::test_named_tasks_functional
-- task(f.foo, name=...) on a bound method is a closure calling the method;
-- functools.partial(baz, "baz") a closure too. The unnamed partial takes
-- its name from the wrapped function (baz), as LangGraph does; the
-- callable instance Qux() is a callable table.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local Foo = {}
Foo.__index = Foo
function Foo:foo(value) return value .. "foo" end
local f = setmetatable({}, Foo)

-- class method task
local foo = sst.task("custom_foo", function(value) return f:foo(value) end)
local other_foo = sst.task("other_foo", function(value) return f:foo(value) end)

-- regular function task
local bar = sst.task{ name = "custom_bar" }(function(value)
  return value .. "|bar"
end)

local function baz(update, value)
  return value .. "|" .. update
end

-- partial function task (unnamed)
local baz_task = sst.task("baz", function(value) return baz("baz", value) end)
-- partial function task (named)
local custom_baz_task = sst.task("custom_baz", function(value) return baz("custom_baz", value) end)

local Qux = { __call = function(self, value) return value .. "|qux" end }
local qux_task = sst.task("qux", setmetatable({}, Qux))

local workflow = sst.entrypoint(function(inputs)
  local foo_result = foo(inputs):result()
  other_foo(inputs):result()
  local fut_bar = bar(foo_result)
  local fut_baz = baz_task(fut_bar:result())
  local fut_custom_baz = custom_baz_task(fut_baz:result())
  local fut_qux = qux_task(fut_custom_baz:result())
  return fut_qux:result()
end)

T.eq(lg.collect(workflow:stream("", nil, "updates")), {
  { custom_foo = "foo" },
  { other_foo = "foo" },
  { custom_bar = "foo|bar" },
  { baz = "foo|bar|baz" },
  { custom_baz = "foo|bar|baz|custom_baz" },
  { qux = "foo|bar|baz|custom_baz|qux" },
  { workflow = "foo|bar|baz|custom_baz|qux" },
}, "stream")
T.finish()
