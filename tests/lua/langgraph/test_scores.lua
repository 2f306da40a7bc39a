-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_scores
-- Parametrized over the query and conn_type: every query on InMemoryStore
-- and SqliteStore (":memory:" and a file). The test embeds with the store's
-- own CharacterEmbeddings, as the Python test uses the store's fixture.
local T = require("checks")
local S = require("lg_store")

for _, query in ipairs{ "aaa", "bbb", "ccc", "abcd", "poisson" } do
  S.each_store(S.vector_opts{ "key0" }, function(store, name, opts)
    local fake_embeddings = opts.index.embed
    local doc = { key0 = "aaa" }
    store:put({ "test" }, "doc", doc, { index = { "key0", "key1" } })

    local results = store:search({}, { query = query })
    local vec0 = fake_embeddings:embed_query(doc.key0)
    local vec1 = fake_embeddings:embed_query(query)
    local similarity = S.cosine(vec1, vec0)

    T.eq(#results, 1, name .. " " .. query .. ": one result")
    T.check(results[1] and math.abs(results[1].score - similarity) <= 1e-3,
            string.format("%s %s: score %s, expected %s", name, query,
                          tostring(results[1] and results[1].score), similarity))
  end)
end
T.finish()
