#!/usr/bin/env bash
# superstep store: the long-term memory store of a SQLite file from the
# command line (put, get, delete, search, ls), items printed as store.h
# prints them; semantic search through tests/agent/openai_server.py's
# deterministic embeddings; every bad input an error naming the problem with
# exit code 1 (2 for usage), never a crash, and no file created by a read.
# Usage: test_store.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
server_pid=
trap '[ -n "$server_pid" ] && kill "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

st() { "$bin" store "$@"; }

# ---- put, get, search, ls, delete ----
expect_rc 0 st put users.42.memories m1 '{"content":"likes teal","n":3}' --db s.db
contains "$out" '"namespace": [
    "users",
    "42",
    "memories"
  ],
  "key": "m1",' "put prints the item, indented"
matches "$(grep created_at <<<"$out")" '  "created_at": "20[0-9-]{8}T[0-9:.]+\+00:00",' \
  "put: created_at as Python's isoformat"
expect_rc 0 st put users.42.memories m2 '{"content":"lives in Oslo","n":5}' --db s.db --json
matches "$out" '\{"namespace":\["users","42","memories"\],"key":"m2","value":\{"content":"lives in Oslo","n":5\},"created_at":"[^"]+","updated_at":"[^"]+"\}' \
  "put --json: one compact item"
expect_rc 0 st put users.7 profile @/dev/stdin --db s.db --json <<<'{"name":"Ada"}'
contains "$out" '"value":{"name":"Ada"}' "put: the value from @FILE"
expect_rc 0 st get users.42.memories m1 --db s.db --json
contains "$out" '"key":"m1","value":{"content":"likes teal","n":3}' "get"
created=$(grep -o '"created_at":"[^"]*"' <<<"$out")
sleep 0.01
expect_rc 0 st put users.42.memories m1 '{"content":"likes teal a lot","n":4}' --db s.db --json
contains "$out" "$created" "a put keeps created_at"
contains "$out" '"content":"likes teal a lot"' "a put replaces the value"
lacks "$(grep -o '"updated_at":"[^"]*"' <<<"$out")" "${created#*:}" "a put sets updated_at"

expect_rc 0 st search users --db s.db --json
[ "$(grep -o '"key":"[^"]*"' <<<"$out" | tr '\n' ' ')" = '"key":"m1" "key":"profile" "key":"m2" ' ] ||
  fail "search: newest written first: $out"
contains "$out" '"score":null' "search items have a score"
expect_rc 0 st search users.42 --filter '{"n":{"$gt":4}}' --db s.db --json
[ "$(grep -o '"key":"[^"]*"' <<<"$out" | tr '\n' ' ')" = '"key":"m2" ' ] || fail "search --filter: $out"
expect_rc 0 st search --limit 1 --offset 1 --db s.db --json
[ "$(grep -o '"key":"[^"]*"' <<<"$out" | tr '\n' ' ')" = '"key":"profile" ' ] ||
  fail "search --limit --offset: $out"
expect_rc 0 st search nobody --db s.db --json
[ "$out" = "[]" ] || fail "search: nothing under an unknown prefix: $out"

expect_rc 0 st ls --db s.db --json
[ "$out" = '[["users","42","memories"],["users","7"]]' ] || fail "ls: $out"
expect_rc 0 st ls --prefix 'users.*' --max-depth 2 --db s.db --json
[ "$out" = '[["users","42"],["users","7"]]' ] || fail "ls --prefix with '*' and --max-depth: $out"
expect_rc 0 st ls --suffix memories --db s.db --json
[ "$out" = '[["users","42","memories"]]' ] || fail "ls --suffix: $out"
expect_rc 0 st ls --limit 1 --offset 1 --db s.db --json
[ "$out" = '[["users","7"]]' ] || fail "ls --limit --offset: $out"

expect_rc 0 st delete users.42.memories m2 --db s.db --json
contains "$out" '"key":"m2","value":{"content":"lives in Oslo","n":5}' "delete prints what it deleted"
expect_rc 1 st get users.42.memories m2 --db s.db
contains "$err" "no item 'm2' in namespace 'users.42.memories'" "get after delete"
expect_rc 1 st delete users.42.memories m2 --db s.db
contains "$err" "no item 'm2'" "delete of an absent item"

# A TTL is accepted and kept through the read (reads from the CLI do not refresh it).
expect_rc 0 st put tmp k '{"a":1}' --ttl 0.5 --db s.db --json
expect_rc 0 st get tmp k --db s.db --json
contains "$out" '"value":{"a":1}' "put --ttl"

# $SUPERSTEP_DB is the default file, as for every command.
expect_rc 0 env SUPERSTEP_DB="$work/env.db" "$bin" store put a k '{"x":1}' --json
[ -f env.db ] || fail "put created \$SUPERSTEP_DB"
expect_rc 0 env SUPERSTEP_DB="$work/env.db" "$bin" store get a k --json
contains "$out" '"value":{"x":1}' "get from \$SUPERSTEP_DB"

# ---- one file for checkpoints and the store ----
cat >g.lua <<'EOF'
local g = superstep.StateGraph{ n = superstep.reducers.sum }
g:add_node("one", function() return { n = 1 } end)
g:add_edge(superstep.START, "one")
g:add_edge("one", superstep.END)
return g
EOF
expect_rc 0 "$bin" run g.lua --db both.db --thread t1 --input '{"n":1}' --json
expect_rc 0 st put notes k '{"text":"beside the checkpoints"}' --db both.db --json
expect_rc 0 "$bin" threads g.lua --db both.db --json
contains "$out" '"thread_id":"t1"' "the checkpoints are still there"
expect_rc 0 "$bin" state g.lua --db both.db --thread t1 --json
contains "$out" '"n":2' "the thread's state"
expect_rc 0 st get notes k --db both.db --json
contains "$out" '"text":"beside the checkpoints"' "the item beside them"

# ---- bad input: a message naming the problem, never a crash ----
expect_rc 1 st get users m1 --db missing.db
contains "$err" "no database 'missing.db'" "a missing database"
[ -e missing.db ] && fail "a read created missing.db"
expect_rc 1 st search --db missing.db
expect_rc 1 st ls --db missing.db
expect_rc 1 st delete a k --db missing.db
[ -e missing.db ] && fail "search, ls or delete created missing.db"
echo "this is not a database, just some text long enough to look like a file" >text.db
expect_rc 1 st get users m1 --db text.db
contains "$err" "text.db" "not a database: the file is named"
contains "$err" "not a usable SQLite database" "not a database"
expect_rc 1 st put users m1 '{"a":1}' --db text.db
[ "$(cat text.db)" = "this is not a database, just some text long enough to look like a file" ] ||
  fail "nothing written to a file that is not a database"
mkdir adir
expect_rc 1 st put users m1 '{"a":1}' --db adir
contains "$err" "adir" "a directory: named"
expect_rc 1 st put a k '{"a": [1, 2' --db s.db
contains "$err" "value: bad JSON at line 1, column " "malformed JSON: its position"
expect_rc 1 st put a k '[1,2]' --db s.db
contains "$err" "the value must be an object, got array" "a value that is not an object"
expect_rc 1 st put a k @nosuchfile.json --db s.db
contains "$err" "nosuchfile.json" "a missing @FILE"
expect_rc 1 st put users..memories k '{}' --db s.db
contains "$err" "namespace 'users..memories': label 2 is empty" "an empty label"
expect_rc 1 st put . k '{}' --db s.db
contains "$err" "label 1 is empty" "a namespace of dots"
expect_rc 1 st put '' k '{}' --db s.db
contains "$err" "the namespace is empty" "an empty namespace"
expect_rc 1 st put langgraph.x k '{}' --db s.db
contains "$err" '"langgraph"' "the reserved root label"
expect_rc 1 st search --filter '{"n":' --db s.db
contains "$err" "--filter: bad JSON at line 1" "a malformed filter"
expect_rc 1 st search --filter '{"n":{"$near":1}}' --db s.db
contains "$err" "unknown operator '\$near'" "a bad filter operator"
expect_rc 1 st search users..x --db s.db
contains "$err" "prefix 'users..x'" "a bad prefix"
expect_rc 1 st ls --suffix 'a..b' --db s.db
contains "$err" "--suffix 'a..b'" "a bad suffix"
expect_rc 0 st search --query anything --db s.db --json
contains "$err" "--query without --embed ranks nothing" "a query without an index: a warning"

# ---- usage errors (exit 2) ----
expect_rc 2 st
contains "$err" "usage: superstep store put" "no command: the usage"
expect_rc 0 st --help
contains "$out" "superstep store search [PREFIX]" "--help"
expect_rc 2 st frob
contains "$err" "unknown command 'frob'" "an unknown command"
expect_rc 2 st get onlyns --db s.db
contains "$err" "expected: superstep store get NS KEY" "a missing KEY"
expect_rc 2 st put a k '{}' extra --db s.db
contains "$err" "unexpected argument 'extra'" "an extra argument"
expect_rc 2 st ls x --db s.db
contains "$err" "expected: superstep store ls" "ls takes no positional argument"
expect_rc 2 st search --limit 0 --db s.db
contains "$err" "--limit: expected a number above 0, got '0'" "a zero limit"
expect_rc 2 st search --offset -3 --db s.db
contains "$err" "--offset: expected a number of 0 or more, got '-3'" "a negative offset"
expect_rc 2 st ls --max-depth x --db s.db
contains "$err" "--max-depth: expected a number above 0" "a bad depth"
expect_rc 2 st put a k '{}' --ttl 0 --db s.db
contains "$err" "--ttl: expected minutes above 0" "a zero TTL"
expect_rc 2 st put a k '{}' --ttl nan --db s.db
contains "$err" "--ttl: expected minutes above 0" "a NaN TTL"
expect_rc 2 st ls --ttl 3 --db s.db
contains "$err" "--ttl: not an option of 'ls'" "an option of another command"
expect_rc 2 st get a k --bogus
contains "$err" "unknown option '--bogus'" "an unknown option"
expect_rc 2 st get a k --db
contains "$err" "option '--db' needs a value" "a missing value"
expect_rc 2 st search --embed http://127.0.0.1:9/v1 --db s.db
contains "$err" "--embed needs --model NAME and --dims N" "--embed alone"
expect_rc 2 st search --model m --db s.db
contains "$err" "go with --embed URL" "--model without --embed"

# ---- semantic search (deterministic embeddings from the test server) ----
python3 -u "$root/tests/agent/openai_server.py" >port.txt 2>server.err &
server_pid=$!
for _ in $(seq 50); do [ -s port.txt ] && break; sleep 0.1; done
port=$(head -1 port.txt)
if [ -z "$port" ]; then
  fail "the test server did not start: $(cat server.err)"
else
  emb=(--embed "http://127.0.0.1:$port/v1" --model embed --dims 8 --field content)
  expect_rc 0 st put mem a '{"content":"my favourite colour is teal","n":1}' --db v.db "${emb[@]}"
  expect_rc 0 st put mem b '{"content":"I live in Oslo","n":2}' --db v.db "${emb[@]}"
  expect_rc 0 st put mem c '{"content":"I live in Oslo"}' --no-index --db v.db "${emb[@]}"
  expect_rc 0 st search mem --query "I live in Oslo" --db v.db "${emb[@]}" --json
  [ "$(grep -o '"key":"[^"]*"' <<<"$out" | tr '\n' ' ')" = '"key":"b" "key":"a" "key":"c" ' ] ||
    fail "semantic search: the closest first, unindexed last: $out"
  matches "$(grep -o '"key":"b".*"score":[^,}]*' <<<"$out" | grep -o '"score":[^,}]*' | head -1)" \
    '"score":(0\.99999[0-9]*|1\.0[0-9]*)' "semantic search: an identical text scores 1"
  contains "$out" '"key":"c","value":{"content":"I live in Oslo"},"created_at":' "the unindexed item"
  lacks "$(grep -o '"key":"c".*' <<<"$out")" '"score":0' "the unindexed item has no score"
  expect_rc 0 st search mem --query "my favourite colour is teal" --limit 1 --db v.db "${emb[@]}" --json
  [ "$(grep -o '"key":"[^"]*"' <<<"$out" | tr '\n' ' ')" = '"key":"a" ' ] ||
    fail "semantic search --limit 1: $out"
  expect_rc 0 st search mem --query "I live in Oslo" --filter '{"n":1}' --db v.db "${emb[@]}" --json
  [ "$(grep -o '"key":"[^"]*"' <<<"$out" | tr '\n' ' ')" = '"key":"a" ' ] ||
    fail "semantic search with a filter: $out"
  # The index's size must match the file's vectors, and endpoint failures are named.
  expect_rc 1 st search mem --query x --db v.db --embed "http://127.0.0.1:$port/v1" --model embed \
    --dims 16
  contains "$err" "8-dim vectors; the store was opened with index dims 16" "a dims mismatch"
  expect_rc 1 st put mem d '{"content":"x"}' --db v.db --embed "http://127.0.0.1:$port/v1" \
    --model embed-500 --dims 8
  contains "$err" "HTTP 500" "a failing endpoint"
  expect_rc 1 st get mem d --db v.db
  contains "$err" "no item 'd'" "nothing stored when the embedding failed"
  # Without --embed the same file reads as a plain store.
  expect_rc 0 st get mem a --db v.db --json
  contains "$out" '"content":"my favourite colour is teal"' "a plain read of an indexed store"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all store CLI checks passed"
