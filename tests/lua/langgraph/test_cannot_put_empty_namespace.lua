-- langgraph: libs/checkpoint/tests/test_store.py::test_cannot_put_empty_namespace
-- Run on InMemoryStore and SqliteStore (":memory:" and a file).
-- InvalidNamespaceError is an error object of code SST_EINVAL. The async
-- calls (aput, aget, ...) and MockAsyncBatchedStore repeat the sync ones and
-- are left out. Left out too: the puts that "go past the public put api"
-- (store.batch([PutOp(("langgraph", "foo"), ...)])): superstep has no batch
-- call, and its put refuses the root label "langgraph" always (store.h);
-- get, search and delete accept that namespace, which is checked instead.
local T = require("checks")
local S = require("lg_store")

S.each_store(nil, function(store, name)
  local doc = { foo = "bar" }
  local function refused(ns, key, what)
    S.raises(function() store:put(ns, key, doc) end, "SST_EINVAL", "namespace",
             name .. ": " .. what)
  end
  refused({}, "foo", "empty namespace")
  refused({ "the", "thing.about" }, "foo", "period in a label")
  refused({ "some", "fun", "" }, "foo", "empty label")
  refused({ "langgraph", "foo" }, "bar", "langgraph root")

  store:put({ "foo", "langgraph", "foo" }, "bar", doc)
  T.eq(store:get({ "foo", "langgraph", "foo" }, "bar").value, doc, name .. ": get")
  T.eq(store:search({ "foo", "langgraph", "foo" }, { query = "bar" })[1].value, doc,
       name .. ": search")
  store:delete({ "foo", "langgraph", "foo" }, "bar")
  T.check(store:get({ "foo", "langgraph", "foo" }, "bar") == nil, name .. ": deleted")

  -- the reserved namespace can be read and deleted (nothing is there)
  T.check(store:get({ "langgraph", "foo" }, "bar") == nil, name .. ": get langgraph")
  T.eq(store:search({ "langgraph", "foo" }), {}, name .. ": search langgraph")
  store:delete({ "langgraph", "foo" }, "bar")

  store:put({ "valid", "namespace" }, "key", doc)
  T.eq(store:get({ "valid", "namespace" }, "key").value, doc, name .. ": valid get")
  T.eq(store:search({ "valid", "namespace" })[1].value, doc, name .. ": valid search")
  store:delete({ "valid", "namespace" }, "key")
  T.check(store:get({ "valid", "namespace" }, "key") == nil, name .. ": valid deleted")
end)
T.finish()
