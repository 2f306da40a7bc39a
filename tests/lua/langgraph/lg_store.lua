-- Store helpers for the ports of LangGraph's store tests (README.md):
-- CharacterEmbeddings (libs/checkpoint/tests/embed_test_utils.py) with
-- Python's own random numbers, the stores a test loops over, and small
-- list helpers.
local sst = superstep
local T = require("checks")
local M = {}

-- ---- Python's random.Random(seed): MT19937 with init_by_array, random(), gauss() ----

local N, MASK = 624, 0xffffffff

local function init_genrand(mt, s)
  mt[0] = s & MASK
  for i = 1, N - 1 do
    mt[i] = (1812433253 * (mt[i - 1] ~ (mt[i - 1] >> 30)) + i) & MASK
  end
end

-- CPython's seed(int): init_by_array with the int's 32-bit words (one for a small seed).
local function init_by_array(mt, key)
  init_genrand(mt, 19650218)
  local i, j = 1, 0
  for _ = math.max(N, #key), 1, -1 do
    mt[i] = ((mt[i] ~ ((mt[i - 1] ~ (mt[i - 1] >> 30)) * 1664525)) + key[j + 1] + j) & MASK
    i, j = i + 1, j + 1
    if i >= N then mt[0] = mt[N - 1]; i = 1 end
    if j >= #key then j = 0 end
  end
  for _ = N - 1, 1, -1 do
    mt[i] = ((mt[i] ~ ((mt[i - 1] ~ (mt[i - 1] >> 30)) * 1566083941)) - i) & MASK
    i = i + 1
    if i >= N then mt[0] = mt[N - 1]; i = 1 end
  end
  mt[0] = 0x80000000
end

local Random = {}
Random.__index = Random

function M.Random(seed)
  local r = setmetatable({ mt = {}, mti = N, gauss_next = nil }, Random)
  init_by_array(r.mt, { seed })
  return r
end

function Random:genrand()
  local mt = self.mt
  if self.mti >= N then
    for k = 0, N - 1 do
      local y = (mt[k] & 0x80000000) | (mt[(k + 1) % N] & 0x7fffffff)
      mt[k] = mt[(k + 397) % N] ~ (y >> 1) ~ ((y & 1) * 0x9908b0df)
    end
    self.mti = 0
  end
  local y = mt[self.mti]
  self.mti = self.mti + 1
  y = y ~ (y >> 11)
  y = y ~ ((y << 7) & 0x9d2c5680)
  y = y ~ ((y << 15) & 0xefc60000)
  y = y ~ (y >> 18)
  return y & MASK
end

function Random:random()
  local a, b = self:genrand() >> 5, self:genrand() >> 6
  return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
end

function Random:gauss(mu, sigma)
  local z = self.gauss_next
  self.gauss_next = nil
  if z == nil then
    local x2pi = self:random() * 2 * math.pi
    local g2rad = math.sqrt(-2.0 * math.log(1.0 - self:random()))
    z = math.cos(x2pi) * g2rad
    self.gauss_next = math.sin(x2pi) * g2rad
  end
  return mu + z * sigma
end

-- ---- CharacterEmbeddings ----

-- Character-frequency embeddings with a random projection per character,
-- drawn lazily from random.Random(seed) as the Python class draws them, so
-- one instance gives the Python class's vectors when called in the same
-- order. Characters are Unicode code points, as Python's Counter(text)
-- counts them. Usable as index.embed (it has embed_documents).
local CharacterEmbeddings = {}
CharacterEmbeddings.__index = CharacterEmbeddings

function M.CharacterEmbeddings(dims, seed)
  dims = dims or 50
  return setmetatable({ dims = dims, rng = M.Random(seed or 42), proj = {} }, CharacterEmbeddings)
end

function CharacterEmbeddings:projection(ch)
  local p = self.proj[ch]
  if p == nil then
    p = {}
    local sigma = 1 / math.sqrt(self.dims)
    for i = 1, self.dims do p[i] = self.rng:gauss(0, sigma) end
    self.proj[ch] = p
  end
  return p
end

function CharacterEmbeddings:embed_query(text)
  local counts, order, total = {}, {}, 0
  for _, c in utf8.codes(text) do
    if counts[c] == nil then order[#order + 1] = c; counts[c] = 0 end
    counts[c] = counts[c] + 1
    total = total + 1
  end
  local e = {}
  for i = 1, self.dims do e[i] = 0.0 end
  if total == 0 then return e end
  for _, c in ipairs(order) do
    local weight = counts[c] / total
    local p = self:projection(c)
    for i = 1, self.dims do e[i] = e[i] + weight * p[i] end
  end
  local norm = 0.0
  for i = 1, self.dims do norm = norm + e[i] * e[i] end
  norm = math.sqrt(norm)
  if norm > 0 then
    for i = 1, self.dims do e[i] = e[i] / norm end
  end
  return e
end

function CharacterEmbeddings:embed_documents(texts)
  local out = {}
  for i, t in ipairs(texts) do out[i] = self:embed_query(t) end
  return out
end

-- Cosine similarity of two vectors (the tests' _cosine_similarity).
function M.cosine(x, y)
  local dot, n1, n2 = 0.0, 0.0, 0.0
  for i = 1, #x do
    dot = dot + x[i] * y[i]
    n1 = n1 + x[i] * x[i]
    n2 = n2 + y[i] * y[i]
  end
  if n1 > 0 and n2 > 0 then return dot / (math.sqrt(n1) * math.sqrt(n2)) end
  return 0.0
end

-- ---- the stores a test runs on ----

-- A fresh temporary file name for a SqliteStore (removed with its WAL files by M.cleanup).
local temp_files = {}
function M.temp_path()
  local path = os.tmpname()
  temp_files[#temp_files + 1] = path
  return path
end

function M.cleanup()
  for _, path in ipairs(temp_files) do
    os.remove(path)
    os.remove(path .. "-wal")
    os.remove(path .. "-shm")
  end
  temp_files = {}
end

-- The stores a parametrized test loops over: LangGraph's InMemoryStore and
-- SqliteStore (":memory:" and a file, the `store` fixture's params), each
-- made with @p opts (a function returning the options, so each store gets
-- fresh ones, as each pytest parameter gets fresh fixtures). Calls
-- fn(store, name, opts, make) for each, make(opts) making another store of
-- the same kind; a failure is recorded with the store's name.
function M.each_store(opts_fn, fn)
  local kinds = {
    { "InMemoryStore", function(o) return sst.InMemoryStore(o) end },
    { "SqliteStore(:memory:)", function(o) return sst.SqliteStore(":memory:", o) end },
    { "SqliteStore(file)", function(o) return sst.SqliteStore(M.temp_path(), o) end },
  }
  for _, k in ipairs(kinds) do
    local o = opts_fn and opts_fn() or nil
    T.case(k[1], function() fn(k[2](o), k[1], o, k[2]) end)
    collectgarbage()
  end
  M.cleanup()
end

-- Options for a store with an index of CharacterEmbeddings(500) (the fake_embeddings fixture).
function M.vector_opts(fields)
  return function()
    local emb = M.CharacterEmbeddings(500)
    return { index = { dims = emb.dims, embed = emb, fields = fields } }
  end
end

-- ---- assertions and list helpers ----

-- Calls fn, which must raise an error object of @p code whose text contains @p text.
function M.raises(fn, code, text, what)
  local ok, err = pcall(fn)
  T.check(not ok, what .. ": expected an error")
  if ok then return end
  T.check(type(err) == "table" and err.code == code,
          string.format("%s: expected %s, got %s", what, code, tostring(type(err) == "table" and err.code or err)))
  if text then
    T.check(tostring(err):find(text, 1, true) ~= nil,
            string.format("%s: error %q lacks %q", what, tostring(err), text))
  end
end

-- The keys of a list of items.
function M.keys(items)
  local out = {}
  for i, it in ipairs(items) do out[i] = it.key end
  return out
end

-- A namespace as one string, for sets and sorting (labels have no '.').
function M.ns_str(ns) return table.concat(ns, ".") end

-- The namespaces of a list (of items when @p of_items) as a sorted list of strings.
function M.ns_set(list, of_items)
  local seen, out = {}, {}
  for _, x in ipairs(list) do
    local s = M.ns_str(of_items and x.namespace or x)
    if not seen[s] then seen[s] = true; out[#out + 1] = s end
  end
  table.sort(out)
  return out
end

-- Python's sorted() of a list of namespaces (tuples compare label by label).
function M.sorted(list)
  local out = {}
  for i, ns in ipairs(list) do out[i] = ns end
  table.sort(out, function(a, b)
    for i = 1, math.min(#a, #b) do
      if a[i] ~= b[i] then return a[i] < b[i] end
    end
    return #a < #b
  end)
  return out
end

function M.has(list, x)
  for _, v in ipairs(list) do if v == x then return true end end
  return false
end

-- The first item of @p items with key @p key, or nil.
function M.find(items, key)
  for _, it in ipairs(items) do if it.key == key then return it end end
  return nil
end

-- str(uuid.uuid4()): a random version-4 UUID (uuid4().hex: without the dashes).
local seeded = false
function M.uuid4()
  if not seeded then math.randomseed(os.time(), math.floor(os.clock() * 1e6)); seeded = true end
  return (string.gsub("xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx", "[xy]", function(c)
    return string.format("%x", c == "x" and math.random(0, 15) or math.random(8, 11))
  end))
end

-- time.sleep(seconds).
function M.sleep(seconds)
  os.execute(string.format("sleep %.3f", seconds))
end

return M
