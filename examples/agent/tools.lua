-- Tools for `superstep agent --tools examples/agent/tools.lua`: each has a
-- name, a description, JSON-schema parameters (checked before the call) and
-- a Lua function; its result is what the model reads next.
return {
  { name = "add", description = "Adds two integers.",
    parameters = { type = "object",
                   properties = { a = { type = "integer" }, b = { type = "integer" } },
                   required = { "a", "b" } },
    fn = function(args) return args.a + args.b end },
  { name = "shout", description = "Upper-cases a text.",
    parameters = { type = "object", properties = { text = { type = "string" } },
                   required = { "text" } },
    fn = function(args) return string.upper(args.text) end },
}
