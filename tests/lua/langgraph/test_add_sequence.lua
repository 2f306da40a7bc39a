-- langgraph: test_pregel.py::test_add_sequence
-- Lua functions have no names, so the "unnamed steps" cases name each step
-- after its Python function (what LangGraph derives from __name__); both
-- duplicate-name cases become the same Lua call.
local sst = superstep
local T = require("checks")
local lg = require("lg")

local function State()
  return sst.StateGraph{
    foo = { reducer = sst.reducers.append, default = sst.array{} },
    bar = sst.reducers.replace,
  }
end

local function step1() return { foo = { "step1" }, bar = "baz" } end
local function step2() return { foo = { "step2" } } end

lg.raises(function() State():add_sequence({}) end, "ValueError", nil, "empty sequence")
lg.raises(function() State():add_sequence{ { "step1", step1 }, { "step1", step1 } } end,
          "ValueError", nil, "duplicate unnamed steps")
lg.raises(function() State():add_sequence{ { "foo", step1 }, { "foo", step1 } } end,
          "ValueError", nil, "duplicate named steps")

-- unnamed steps
local builder = State()
builder:add_sequence{ { "step1", step1 }, { "step2", step2 } }
builder:add_edge(sst.START, "step1")
local graph = builder:compile()
T.eq(graph:invoke({ foo = sst.array{} }), { foo = { "step1", "step2" }, bar = "baz" }, "unnamed invoke")
T.eq(lg.collect(graph:stream({ foo = sst.array{} }, nil, "updates")), {
  { step1 = { foo = { "step1" }, bar = "baz" } },
  { step2 = { foo = { "step2" } } },
}, "unnamed stream")

-- named steps
builder = State()
builder:add_sequence{ { "meow1", step1 }, { "meow2", step2 } }
builder:add_edge(sst.START, "meow1")
graph = builder:compile()
local result = graph:invoke({ foo = sst.array{} })
local chunks = lg.collect(graph:stream({ foo = sst.array{} }, nil, "updates"))
T.eq(result, { foo = { "step1", "step2" }, bar = "baz" }, "named invoke")
T.eq(chunks, {
  { meow1 = { foo = { "step1" }, bar = "baz" } },
  { meow2 = { foo = { "step2" } } },
}, "named stream")

builder = State()
builder:add_sequence{
  { "meow1", function() return { foo = { "foo" } } end },
  { "meow2", function(state) return { bar = state.foo[1] .. "bar" } end },
}
builder:add_edge(sst.START, "meow1")
graph = builder:compile()
result = graph:invoke({ foo = sst.array{} })
chunks = lg.collect(graph:stream({ foo = sst.array{} }, nil, "updates"))
T.eq(result, { bar = "foobar", foo = { "foo" } }, "lambdas invoke")
T.eq(chunks, { { meow1 = { foo = { "foo" } } }, { meow2 = { bar = "foobar" } } }, "lambdas stream")

-- two sequences
local function a() return { foo = { "a" } } end
local function b() return { foo = { "b" } } end
builder = State()
builder:add_sequence{ { "a", a } }
builder:add_sequence{ { "b", b } }
builder:add_edge(sst.START, "a")
builder:add_edge("a", "b")
graph = builder:compile()
T.eq(graph:invoke({ foo = sst.array{} }), { foo = { "a", "b" } }, "two sequences invoke")
T.eq(lg.collect(graph:stream({ foo = sst.array{} }, nil, "updates")),
     { { a = { foo = { "a" } } }, { b = { foo = { "b" } } } }, "two sequences stream")

-- mixed nodes and sequences
local function c() return { foo = { "c" } } end
local function d() return { foo = { "d" } } end
local function e() return { foo = { "e" } } end
local function foo(state)
  if state.foo[1] == "a" then return "d" end
  return "c"
end
builder = State()
builder:add_sequence{ { "a", a }, { "b", b } }
builder:add_conditional_edges("b", foo)
builder:add_node("c", c)
builder:add_sequence{ { "d", d }, { "e", e } }
builder:add_edge(sst.START, "a")
graph = builder:compile()
T.eq(graph:invoke({ foo = sst.array{} }), { foo = { "a", "b", "d", "e" } }, "complex invoke 1")
T.eq(graph:invoke({ foo = { "start" } }), { foo = { "start", "a", "b", "c" } }, "complex invoke 2")
T.eq(lg.collect(graph:stream({ foo = sst.array{} }, nil, "updates")), {
  { a = { foo = { "a" } } },
  { b = { foo = { "b" } } },
  { d = { foo = { "d" } } },
  { e = { foo = { "e" } } },
}, "complex stream")
T.finish()
