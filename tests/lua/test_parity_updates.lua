-- LangGraph-parity features (issue 14), checked through the Lua API.
local sst = superstep
local T = dofile((debug.getinfo(1, "S").source:match("^@(.*/)") or "") .. "checks.lua")

local check, eq, raises = T.check, T.eq, T.raises

local function cfg(id) return { configurable = { thread_id = id } } end
local function concat(a, b) return (a or "") .. b end

-- A node returns a list of updates and Commands: LangGraph applies them in
-- order as the node's writes, each through the reducer (a field written
-- twice is reduced twice); a Command's goto in the list still routes.
do
  local g = sst.StateGraph{
    foo = { reducer = concat, default = "" },
    n = { reducer = sst.reducers.sum, default = 0 },
  }
  g:add_node("a", function()
    return { { foo = "a1", n = 1 }, sst.Command{ update = { foo = "a2" }, ["goto"] = "c" }, { n = 2 } }
  end, { ends = { "c" } })
  g:add_node("b", function() return { foo = "b" } end)
  g:add_node("c", function() return { foo = "c" } end)
  g:add_edge(sst.START, "a")
  g:add_edge("a", "b")
  local r = g:compile():invoke({ foo = "" })
  eq(r.foo, "a1a2c", "list return: foo written twice, in order, then c (goto)")
  eq(r.n, 3, "list return: n written twice")

  local g2 = sst.StateGraph{ value = { reducer = sst.reducers.append, default = sst.array{} } }
  g2:add_node("my_node", function()
    return { sst.Command{ update = { value = { "a" } } }, { value = { "b" } } }
  end)
  g2:add_edge(sst.START, "my_node")
  eq(g2:compile():invoke({ value = sst.array{} }).value, { "a", "b" }, "list of Command and update")

  local function fails(ret, text, what)
    local g3 = sst.StateGraph{ x = sst.reducers.replace }
    g3:add_node("n", function() return ret end)
    g3:add_edge(sst.START, "n")
    local app = g3:compile()
    raises(function() app:invoke({}) end, text, what)
  end
  fails({ { x = 1 }, 5 }, "returned a list whose element 2 is a number", "list with a number")
  fails({ { x = 1 }, x = 2 }, "mixing a list and fields", "list mixed with fields")
  fails({ { { x = 1 } } }, "a list inside a list", "nested list")
end

-- A Command update given as a list of {field, value} pairs: one write each,
-- in order (LangGraph's update=[("foo", v1), ("foo", v2)]).
do
  local function join(a, b)
    if a == nil or a == "" then return b end
    return a .. ", " .. b
  end
  local g = sst.StateGraph{ foo = { reducer = join, default = "" } }
  g:add_node("one", function()
    return sst.Command{ update = { { "foo", "one.0" }, { "foo", "one.1" } } }
  end)
  g:add_node("two", function() return { foo = "two" } end)
  g:add_edge(sst.START, "one")
  g:add_edge("one", "two")
  local app = g:compile{ checkpointer = sst.MemorySaver() }
  eq(app:invoke({ foo = "input" }, cfg("pairs")).foo, "input, one.0, one.1, two", "pairs applied in order")
  -- The stored delta replays to the same state.
  local h = app:get_state_history(cfg("pairs"))
  eq(h[2].values.foo, "input, one.0, one.1", "pairs: the checkpoint after one")

  local bad = sst.StateGraph{ foo = sst.reducers.replace }
  bad:add_node("n", function() return sst.Command{ update = { { 1, 2 } } } end)
  bad:add_edge(sst.START, "n")
  local bad_app = bad:compile()
  raises(function() bad_app:invoke({}) end, "element 1 is not a {field, value} pair", "bad pair")
end

-- sst.Overwrite(v) (or {__overwrite__ = v}) sets a field bypassing its
-- reducer; the superstep's other writes to it are dropped; checkpoints
-- replay it; two in one superstep are an error (InvalidUpdateError).
do
  local function build(c_overwrites)
    local g = sst.StateGraph{ msgs = { reducer = sst.reducers.append, default = sst.array{} } }
    g:add_node("a", function() return { msgs = { "a" } } end)
    g:add_node("b", function() return { msgs = sst.Overwrite({ "b" }) } end)
    g:add_node("c", function()
      return { msgs = c_overwrites and { __overwrite__ = { "c" } } or { "c" } }
    end)
    g:add_node("d", function() return { msgs = { "d" } } end)
    g:add_edge(sst.START, "a")
    g:add_edge("a", "b")
    g:add_edge("a", "c")
    g:add_edge("b", "d")
    g:add_edge("c", "d")
    return g:compile{ checkpointer = sst.MemorySaver() }
  end
  local app = build(false)
  eq(app:invoke({ msgs = { "START" } }, cfg("ow")).msgs, { "b", "d" }, "Overwrite wins its superstep")
  local h = app:get_state_history(cfg("ow"))
  eq(h[1].values.msgs, { "b", "d" }, "Overwrite: latest checkpoint")
  eq(h[2].values.msgs, { "b" }, "Overwrite: replayed checkpoint after b and c")

  local g = sst.StateGraph{ msgs = { reducer = sst.reducers.append, default = sst.array{ "d" } } }
  g:add_node("n", function() return { msgs = { "n" } } end)
  g:add_edge(sst.START, "n")
  local in_app = g:compile{ checkpointer = sst.MemorySaver() }
  eq(in_app:invoke({ msgs = { "x" } }, cfg("in")).msgs, { "d", "x", "n" }, "input appended")
  eq(in_app:invoke({ msgs = sst.Overwrite({ "y" }) }, cfg("in")).msgs, { "y", "n" },
     "Overwrite in the input replaces the thread's list")

  local bad = build(true)
  local ok, err = pcall(bad.invoke, bad, { msgs = { "START" } }, cfg("ow2"))
  check(not ok, "two Overwrites in one superstep fail")
  eq(type(err) == "table" and err.code or tostring(err), "SST_ECONFLICT", "two Overwrites: code")
  check(tostring(err):find("Can receive only one Overwrite value per super-step.", 1, true) ~= nil,
        "two Overwrites: message " .. tostring(err))
end

-- add_messages: removing an id that is not there is LangGraph's ValueError.
do
  local g = sst.StateGraph{ messages = { reducer = sst.reducers.add_messages, default = sst.array{} } }
  g:add_node("n", function() return { messages = { { type = "remove", id = "2" } } } end)
  g:add_edge(sst.START, "n")
  local app = g:compile()
  local ok, err = pcall(app.invoke, app, { messages = { { role = "user", content = "hi", id = "1" } } })
  check(not ok, "removing a missing id fails")
  eq(type(err) == "table" and err.code or tostring(err), "SST_EINVAL", "remove missing: code")
  check(tostring(err):find("Attempting to delete a message with an ID that doesn't exist", 1, true) ~= nil,
        "remove missing: message " .. tostring(err))
end

T.finish()
local done = sst.StateGraph{}
done:add_node("noop", function() end)
done:add_edge(sst.START, "noop")
return done
