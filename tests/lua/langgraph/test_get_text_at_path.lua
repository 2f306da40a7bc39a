-- langgraph: libs/checkpoint/tests/test_store.py::test_get_text_at_path
-- get_text_at_path is internal in superstep: each path is given to a put as
-- its index fields (put{index = {path}}) and the texts the store hands to the
-- embed function are the path's texts. The store embeds each distinct text
-- of a put once, so lists compare as sets where Python's are sets already.
-- Left out: get_text_at_path(None, path) (a put's value is always a table).
local sst = superstep
local T = require("checks")
local S = require("lg_store")

local nested_data = {
  name = "test",
  info = {
    age = 25,
    tags = { "a", "b", "c" },
    metadata = { created = "2024-01-01", updated = "2024-01-02" },
  },
  items = {
    { id = 1, value = "first", tags = { "x", "y" } },
    { id = 2, value = "second", tags = { "y", "z" } },
    { id = 3, value = "third", tags = { "z", "w" } },
  },
  empty = sst.null,
  zeros = { 0, 0.0, "0" },
  empty_list = sst.array{},
  empty_dict = sst.object{},
}
-- json.dumps(nested_data, sort_keys=True)
local dumped = '{"empty": null, "empty_dict": {}, "empty_list": [], "info": {"age": 25, '
  .. '"metadata": {"created": "2024-01-01", "updated": "2024-01-02"}, "tags": ["a", "b", "c"]}, '
  .. '"items": [{"id": 1, "tags": ["x", "y"], "value": "first"}, {"id": 2, "tags": ["y", "z"], '
  .. '"value": "second"}, {"id": 3, "tags": ["z", "w"], "value": "third"}], "name": "test", '
  .. '"zeros": [0, 0.0, "0"]}'

local seen
local store = sst.InMemoryStore{ index = { dims = 1, embed = function(texts)
  seen = texts
  local out = {}
  for i = 1, #texts do out[i] = { 1 } end
  return out
end } }

local function get_text_at_path(data, path)
  seen = {}
  store:put({ "paths" }, "k", data, { index = { path } })
  return seen
end

local function set(list)
  local out = {}
  for _, v in ipairs(list) do out[#out + 1] = v end
  table.sort(out)
  return out
end

T.eq(get_text_at_path(nested_data, "$"), { dumped }, "$")
T.eq(get_text_at_path(nested_data, "name"), { "test" }, "name")
T.eq(get_text_at_path(nested_data, "info.age"), { "25" }, "info.age")
T.eq(get_text_at_path(nested_data, "info.metadata.created"), { "2024-01-01" }, "created")
T.eq(get_text_at_path(nested_data, "items[0].value"), { "first" }, "items[0]")
T.eq(get_text_at_path(nested_data, "items[-1].value"), { "third" }, "items[-1]")
T.eq(get_text_at_path(nested_data, "items[1].tags[0]"), { "y" }, "items[1].tags[0]")
T.eq(set(get_text_at_path(nested_data, "items[*].value")), set{ "first", "second", "third" },
     "items[*].value")
T.eq(set(get_text_at_path(nested_data, "info.metadata.*")), set{ "2024-01-01", "2024-01-02" },
     "metadata.*")
T.eq(set(get_text_at_path(nested_data, "{name,info.age}")), set{ "test", "25" }, "{name,info.age}")
T.eq(set(get_text_at_path(nested_data, "items[*].{id,value}")),
     set{ "1", "2", "3", "first", "second", "third" }, "items[*].{id,value}")
T.eq(set(get_text_at_path(nested_data, "items[*].tags[*]")), set{ "x", "y", "z", "w" },
     "items[*].tags[*]")

T.eq(get_text_at_path({}, "any.path"), {}, "empty dict")
T.eq(get_text_at_path(nested_data, ""), { dumped }, "empty path")
T.eq(get_text_at_path(nested_data, "nonexistent"), {}, "nonexistent")
T.eq(get_text_at_path(nested_data, "items[99].value"), {}, "items[99]")
T.eq(get_text_at_path(nested_data, "items[*].nonexistent"), {}, "items[*].nonexistent")

T.eq(get_text_at_path(nested_data, "empty"), {}, "empty")
T.eq(get_text_at_path(nested_data, "empty_list"), { "[]" }, "empty_list")
T.eq(get_text_at_path(nested_data, "empty_dict"), { "{}" }, "empty_dict")

T.eq(set(get_text_at_path(nested_data, "zeros[*]")), set{ "0", "0.0" }, "zeros[*]")

T.eq(get_text_at_path(nested_data, "items[].value"), {}, "items[]")
T.eq(get_text_at_path(nested_data, "items[abc].value"), {}, "items[abc]")
T.eq(get_text_at_path(nested_data, "{unclosed"), {}, "{unclosed")
T.eq(get_text_at_path(nested_data, "nested[{invalid}]"), {}, "nested[{invalid}]")
T.finish()
