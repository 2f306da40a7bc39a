-- langgraph: test_pregel.py::test_send_sequences
-- deliberate: a Command goto replaces the node's edges (DESIGN.md semantic
--   5; LangGraph adds them), so node 2's Command names "3", its edge target,
--   beside the Send, to run 3 as LangGraph does.
-- StateGraph(Annotated[list, operator.add]) is a root state: written here as
-- sst.StateGraph(<reducer>) (no README mapping yet). The Send payload is the
-- node's `input`; Python's str(Command(goto=Send('2', 3))) is rebuilt from
-- the payload's goto Send (fields node and arg, as in Python).
local sst = superstep
local T = require("checks")

local COMMAND = getmetatable(sst.Command{})

local function repr(cmd)
  local s = cmd["goto"]
  return string.format("Command(goto=Send(node='%s', arg=%s))", tostring(s.node), tostring(s.arg))
end

local function Node(name)
  return name, function(state, input)
    if input == nil then return { name } end
    local is_command = getmetatable(input) == COMMAND
    local update = { name .. "|" .. (is_command and repr(input) or tostring(input)) }
    if is_command then
      -- superstep's goto replaces node 2's edge to 3 (deliberate): name 3 too
      local go = name == "2" and { input["goto"], "3" } or input["goto"]
      return { sst.Command{ ["goto"] = go }, sst.Command{ update = update } }
    end
    return update
  end
end

local builder = sst.StateGraph(sst.reducers.append)
builder:add_node(Node("1"))
builder:add_node(Node("2"))
builder:add_node(Node("3"))
builder:add_node(Node("3.1"))
builder:add_edge(sst.START, "1")
builder:add_conditional_edges("1", function()
  return {
    sst.Send("2", sst.Command{ ["goto"] = sst.Send("2", 3) }),
    sst.Send("2", sst.Command{ ["goto"] = sst.Send("2", 4) }),
    "3.1",
  }
end)
-- route_to_three -> Literal["3"]: the path map is the Literal
builder:add_conditional_edges("2", function() return "3" end, { "3" })
local graph = builder:compile()
T.eq(graph:invoke({ "0" }), {
  "0",
  "1",
  "3.1",
  "2|Command(goto=Send(node='2', arg=3))",
  "2|Command(goto=Send(node='2', arg=4))",
  "3",
  "2|3",
  "2|4",
  "3",
}, "invoke")
T.finish()
