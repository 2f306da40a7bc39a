-- A functional workflow (docs/functional.md) served like any graph: a task
-- that doubles, one that asks for approval, and ctx.previous counting runs.
local sst = superstep

local double = sst.task("double", function(x) return 2 * x end)
local approve = sst.task("approve", function(value)
  return sst.interrupt({ question = "keep " .. value .. "?" })
end)

return sst.entrypoint{ name = "workflow" }(function(input, ctx)
  if type(input) == "number" then
    return double(input):result()                 -- a value in, a value out
  end
  local d = double(input.n):result()
  local answer = approve(d):result()
  local runs = (type(ctx.previous) == "table" and ctx.previous.runs or 0) + 1
  return { doubled = d, answer = answer, runs = runs }
end)
