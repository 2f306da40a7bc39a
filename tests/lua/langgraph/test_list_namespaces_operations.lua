-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_list_namespaces_operations
-- Run on InMemoryStore and SqliteStore (":memory:" and a file), with the
-- Python test's index.
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts{ "key0", "key1", "key3" }, function(store, name)
  local p = S.uuid4()
  local test_namespaces = {
    { p, "test", "documents", "public", p },
    { p, "test", "documents", "private", p },
    { p, "test", "images", "public", p },
    { p, "test", "images", "private", p },
    { p, "prod", "documents", "public", p },
    { p, "prod", "documents", "some", "nesting", "public", p },
    { p, "prod", "documents", "private", p },
  }
  for _, ns in ipairs(test_namespaces) do store:put(ns, "dummy", { content = "dummy" }) end

  local prefix_result = store:list_namespaces{ prefix = { p, "test" } }
  T.eq(#prefix_result, 4, name .. ": prefix")
  for _, ns in ipairs(prefix_result) do T.eq(ns[2], "test", name .. ": prefix label") end

  local specific = store:list_namespaces{ prefix = { p, "test", "documents" } }
  T.eq(#specific, 2, name .. ": specific prefix")
  for _, ns in ipairs(specific) do
    T.eq({ ns[2], ns[3] }, { "test", "documents" }, name .. ": specific labels")
  end

  local suffix_result = store:list_namespaces{ suffix = { "public", p } }
  T.eq(#suffix_result, 4, name .. ": suffix")
  for _, ns in ipairs(suffix_result) do T.eq(ns[#ns - 1], "public", name .. ": suffix label") end

  local both = store:list_namespaces{ prefix = { p, "test" }, suffix = { "public", p } }
  T.eq(#both, 2, name .. ": prefix and suffix")
  for _, ns in ipairs(both) do
    T.check(ns[2] == "test" and ns[#ns - 1] == "public", name .. ": prefix and suffix labels")
  end

  local wildcard_prefix = store:list_namespaces{ prefix = { p, "*", "documents" } }
  T.eq(#wildcard_prefix, 5, name .. ": wildcard prefix")
  for _, ns in ipairs(wildcard_prefix) do T.eq(ns[3], "documents", name .. ": wildcard label") end

  local wildcard_suffix = store:list_namespaces{ suffix = { "*", "public", p } }
  T.eq(#wildcard_suffix, 4, name .. ": wildcard suffix")
  for _, ns in ipairs(wildcard_suffix) do T.eq(ns[#ns - 1], "public", name .. ": public") end

  local wildcard_single = store:list_namespaces{ suffix = { "some", "*", "public", p } }
  T.eq(#wildcard_single, 1, name .. ": wildcard single")
  T.eq(wildcard_single[1], { p, "prod", "documents", "some", "nesting", "public", p },
       name .. ": wildcard single namespace")

  for _, ns in ipairs(store:list_namespaces{ max_depth = 3 }) do
    T.check(#ns <= 3, name .. ": max depth 3")
  end

  local max_depth_result = store:list_namespaces{ max_depth = 4, prefix = { p, "*", "documents" } }
  T.eq(#S.ns_set(max_depth_result), 5, name .. ": max depth 4 distinct")
  T.eq(#max_depth_result, 5, name .. ": max depth 4")

  T.eq(#store:list_namespaces{ prefix = { p }, limit = 3 }, 3, name .. ": limit")
  T.eq(#store:list_namespaces{ prefix = { p }, offset = 3 }, #test_namespaces - 3,
       name .. ": offset")

  local all = store:list_namespaces{ prefix = { p } }
  T.eq(#all, #test_namespaces, name .. ": all")
  T.eq(S.ns_set(all), S.ns_set(test_namespaces), name .. ": all as a set")

  for _, ns in ipairs(test_namespaces) do store:delete(ns, "dummy") end
end)
T.finish()
