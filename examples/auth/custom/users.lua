-- The users of the custom example (auth.lua): bearer token -> user. A demo: a real
-- deployment verifies tokens its identity provider issued (the built-in "jwt" mode of
-- ../langgraph.json, or a call from authenticate to the provider).
return {
  ["demo-token-alice-0123456789"] = { identity = "alice" },
  ["demo-token-bob-0123456789"] = { identity = "bob" },
  ["demo-token-admin-0123456789"] = { identity = "admin", permissions = { "admin" } },
}
