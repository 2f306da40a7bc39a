-- langgraph: libs/checkpoint/tests/test_store.py::test_vector_store_initialization
-- langgraph: libs/checkpoint-sqlite/tests/test_store.py::test_vector_store_initialization
-- Both tests, on InMemoryStore and SqliteStore (":memory:" and a file):
-- store.index_config is the index given (SqliteStore's store.embeddings is
-- index_config.embed). Left out: the SQLite test's query of sqlite_master
-- for vector tables (the schema is internal; store.h names its tables).
local T = require("checks")
local S = require("lg_store")

S.each_store(S.vector_opts(), function(store, name, opts)
  local fake_embeddings = opts.index.embed
  T.check(store.index_config ~= nil, name .. ": index_config")
  T.eq(store.index_config.dims, fake_embeddings.dims, name .. ": dims")
  T.check(store.index_config.embed == fake_embeddings, name .. ": embed")
  T.check(store.index_config.text_fields == nil, name .. ": no text_fields")
end)

local text_fields = { "content", "title" }
S.each_store(function()
  local emb = S.CharacterEmbeddings(500)
  return { index = { dims = emb.dims, embed = emb, text_fields = text_fields } }
end, function(store, name, opts)
  T.check(store.index_config.embed == opts.index.embed, name .. ": embed")
  T.eq(store.index_config.dims, 500, name .. ": dims")
  T.eq(store.index_config.text_fields, text_fields, name .. ": text_fields")
end)
T.finish()
