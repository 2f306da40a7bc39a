#!/usr/bin/env bash
# The superstep binary on PostgreSQL (the CTest fixture "pg"): --db
# postgresql://... for run, resume in a second process, state, history,
# threads and store; superstep.PostgresSaver/PostgresStore in a script; the
# errors of an unreachable server, of tables newer than the binary, and of
# `check` (SQLite only).
# Usage: test_postgres.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
script=$root/examples/lua/research.lua
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

base=${SST_PGTEST_URL:-$(cat "${SST_PGTEST_URL_FILE:-/nonexistent}" 2>/dev/null)}
if [ -z "$base" ]; then
  if [ "${SST_REQUIRE_POSTGRES:-0}" = 1 ]; then
    echo "FAIL: no test PostgreSQL server and SST_REQUIRE_POSTGRES=1"
    exit 1
  fi
  echo "no test PostgreSQL server: skipped"
  exit 0
fi
# A schema of this test's own on the shared test server.
schema="t_cli_$$"
psql -q "$base" -c "SET client_min_messages=warning; DROP SCHEMA IF EXISTS $schema CASCADE; CREATE SCHEMA $schema" ||
  { echo "FAIL: cannot make schema $schema"; exit 1; }
db="$base?options=-csearch_path%3D$schema"

# A run that stops at the approval interrupt; a second process resumes it.
expect_rc 3 "$bin" run "$script" --db "$db" --thread t1 --input '{"topic":"durable graphs"}' --json
contains "$out" '"status":"interrupted"' "interrupted status"
expect_rc 0 "$bin" run "$script" --db "$db" --thread t1 --resume '"yes"' --json
contains "$out" '"status":"completed"' "completed after resume"
contains "$out" '"report":"durable graphs: 3 notes from 1 sources"' "report after resume"

# The same run on SQLite gives the same state and history.
expect_rc 3 "$bin" run "$script" --db r.db --thread t1 --input '{"topic":"durable graphs"}' --json
expect_rc 0 "$bin" run "$script" --db r.db --thread t1 --resume '"yes"' --json
expect_rc 0 "$bin" state "$script" --db r.db --thread t1 --json
sqlite_state=$(sed -E 's/"(checkpoint_id|created_at|parent_checkpoint_id|parent_id|thread_ts)":"[^"]*"//g' <<<"$out")
expect_rc 0 "$bin" state "$script" --db "$db" --thread t1 --json
pg_state=$(sed -E 's/"(checkpoint_id|created_at|parent_checkpoint_id|parent_id|thread_ts)":"[^"]*"//g' <<<"$out")
[ "$pg_state" = "$sqlite_state" ] || fail "state differs from SQLite's: $pg_state vs $sqlite_state"
expect_rc 0 "$bin" history "$script" --db r.db --thread t1 --json
n_sqlite=$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)
expect_rc 0 "$bin" history "$script" --db "$db" --thread t1 --json
n_pg=$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)
[ "$n_pg" -ge 5 ] && [ "$n_pg" = "$n_sqlite" ] || fail "history: $n_pg checkpoints, SQLite $n_sqlite"
expect_rc 0 "$bin" history "$script" --db "$db" --thread t1 --json --limit 2
[ "$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)" = 2 ] || fail "--limit 2: $out"

# threads
expect_rc 3 "$bin" run "$script" --db "$db" --thread t2 --input '{"topic":"x"}' --json
expect_rc 0 "$bin" threads "$script" --db "$db" --json
contains "$out" '"thread_id":"t1"' "thread t1 listed"
contains "$out" '"thread_id":"t2"' "thread t2 listed"
contains "$out" '"status":"interrupted"' "an interrupted thread's status"

# the store
expect_rc 0 "$bin" store put users.42 m1 '{"content":"likes teal","n":3}' --db "$db"
expect_rc 0 "$bin" store get users.42 m1 --db "$db" --json
contains "$out" '"content":"likes teal"' "store get"
expect_rc 0 "$bin" store search users --db "$db" --json
contains "$out" '"key":"m1"' "store search"

# A script that opens PostgreSQL itself.
cat >own.lua <<EOF
local sst = superstep or require("superstep")
local g = sst.StateGraph{ n = { reducer = sst.reducers.sum, default = 0 } }
g:add_node("inc", function(state, _, ctx)
  local seen = ctx.store:get({ "counts" }, "runs")
  ctx.store:put({ "counts" }, "runs", { n = (seen and seen.value.n or 0) + 1 })
  return { n = 1 }
end)
g:set_entry_point("inc")
g:set_finish_point("inc")
return g:compile{ checkpointer = sst.PostgresSaver("$db"), store = sst.PostgresStore("$db") }
EOF
expect_rc 0 "$bin" run own.lua --thread own --input '{}' --json
contains "$out" '"n":1' "PostgresSaver run"
expect_rc 0 "$bin" run own.lua --thread own --input '{}' --json
contains "$out" '"n":2' "PostgresSaver keeps the thread across processes"
expect_rc 0 "$bin" store get counts runs --db "$db" --json
contains "$out" '"n":2' "PostgresStore written by the nodes"

# Errors: an unreachable server, newer tables, check.
expect_rc 1 "$bin" run "$script" --db "postgresql://nobody@127.0.0.1:1/none" --thread t --input '{}'
contains "$err" "127.0.0.1:1" "the unreachable server is named"
contains "$err" "cannot connect" "why"
psql -q "$base" -c "UPDATE $schema.sst_schema SET version = version + 100 WHERE component = 'checkpoint'" ||
  fail "psql update"
expect_rc 1 "$bin" state "$script" --db "$db" --thread t1
contains "$err" "newer than this build" "newer tables refused"
expect_rc 1 "$bin" check --db "$db"
contains "$err" "SQLite" "check is for SQLite files"

psql -q "$base" -c "SET client_min_messages=warning; DROP SCHEMA $schema CASCADE" >/dev/null || true
if [ "$failures" -ne 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all PostgreSQL CLI checks passed"
