#!/usr/bin/env bash
# superstep on PostgreSQL next to SQLite and LangGraph.js's PostgresSaver, in
# one run, on one throwaway PostgreSQL 15 with fsync on (tests/pg/cluster.sh,
# SST_PG_FSYNC=on), default settings otherwise (issue 18).
#
#   bash bench/postgres.sh [--quick] [--build DIR] [--secs S] [--json FILE]
#
#  1. PostgreSQL's own commit rate: pgbench, single-row INSERTs, S seconds each:
#     one client with synchronous_commit on (as our commits) and off, and 16
#     clients with it on (group commit): the physical limit ours compare to.
#  2. W3 (the chat loop) at 500 and 5 000 supersteps: superstep's C API on
#     PostgreSQL and on SQLite, and LangGraph.js's PostgresSaver
#     (@langchain/langgraph-checkpoint-postgres, pinned in
#     bench/langgraphjs/package.json) at 500 (and 5 000 without --quick: it
#     grows quadratically and takes long): time, and bytes (every table of
#     the schema with indexes and TOAST, pg_total_relation_size).
#  3. W4 (2 000 threads, a 3-node chain each) on the C API: PostgreSQL and
#     SQLite; checkpoint commits/s as a ratio to (1); rows and bytes per run.
#  4. W4 through the queue: `superstep serve --workers 0` (API only) and 1, 2
#     and 4 `superstep worker --workers 2` processes; bench_server_load
#     --mode chain --conc 16 for S seconds: runs/s, p99; rows and bytes per run.
# --quick: S = 3 and the smaller sizes only.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0 build=$root/build-rel secs="" jsonout=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --build) build=$2; shift ;;
    --secs) secs=$2; shift ;;
    --json) jsonout=$2; shift ;;
    *) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then secs=${secs:-3}; else secs=${secs:-10}; fi
say() { echo "bench/postgres: $*" >&2; }
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
if [ -z "$pgbin" ]; then
  say "PostgreSQL's server is not installed (apt-get install postgresql libpq-dev)"
  exit 1
fi

say "building superstep, bench_side and bench_server_load (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSST_BUILD_TESTS=OFF -DSST_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target superstep_cli bench_side bench_server_load >/dev/null
cli=$build/superstep side=$build/bench/bench_side load=$build/bench/bench_server_load

peer=$root/bench/peers/langgraphjs
mkdir -p "$peer"
cp "$root"/bench/langgraphjs/*.mjs "$root"/bench/langgraphjs/package.json "$peer"/
if [ ! -d "$peer/node_modules/@langchain/langgraph-checkpoint-postgres" ]; then
  say "installing the pinned LangGraph.js packages into bench/peers/langgraphjs"
  (cd "$peer" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

work=$(mktemp -d /tmp/sst-bench-pg.XXXXXX)
raw=$work/raw.jsonl
: >"$raw"
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  sh "$root/tests/pg/cluster.sh" stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
SST_PG_FSYNC=on sh "$root/tests/pg/cluster.sh" start "$work/pg" >&2
base=$(cat "$work/pg/url")
psql() { command psql -qAt "$@"; }
schema() { # NAME: a fresh schema, printed as a --db URL
  psql "$base" -c "SET client_min_messages=warning; DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1"
  echo "$base?options=-csearch_path%3D$1"
}
bytes_of() { # URL: the bytes of its schema's tables
  psql "$1" -c "SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind = 'r' AND n.nspname = current_schema()"
}
rows_of() { # URL: "table rows, ..." of its schema
  psql "$1" -c "SELECT string_agg(relname || ' ' || n_live_tup, ', ' ORDER BY relname) FROM pg_stat_user_tables WHERE schemaname = current_schema()"
}
emit() { echo "$1" >>"$raw"; }

# ---- 1. PostgreSQL's own commit rate ----
psql "$base" -c "CREATE TABLE IF NOT EXISTS pgbench_one(id bigserial PRIMARY KEY, v text)"
echo "INSERT INTO pgbench_one(v) VALUES ('x');" >"$work/one.sql"
for run in "on 1" "off 1" "on 16"; do
  set -- $run
  tps=$(PGOPTIONS="-c synchronous_commit=$1" "$pgbin/pgbench" -n -c "$2" -j 2 -T "$secs" -f "$work/one.sql" "$base" 2>/dev/null |
    awk '/^tps/ {print $3; exit}')
  say "PostgreSQL single-row INSERT commits, $2 client(s), synchronous_commit=$1: $tps/s"
  emit "{\"what\":\"pg_insert_commits\",\"synchronous_commit\":\"$1\",\"clients\":$2,\"per_s\":$tps}"
done

# ---- 2. W3 ----
w3sizes="250 2500"
for it in $w3sizes; do
  url=$(schema "w3_$it")
  say "W3 $((2 * it)) supersteps: superstep on PostgreSQL"
  "$side" W3 c-postgres "$it" "$url" | tee -a "$raw" >/dev/null
  say "W3 $((2 * it)) supersteps: superstep on SQLite"
  "$side" W3 c-sqlite "$it" "$work" | tee -a "$raw" >/dev/null
  if [ "$it" = 250 ] || [ "$quick" = 0 ]; then
    say "W3 $((2 * it)) supersteps: LangGraph.js PostgresSaver"
    marks="$((it / 5)),$((it / 2)),$it"
    (cd "$peer" && node w3_chat.mjs --saver=postgres --iters="$marks" --url="$base" --schema="lgjs_w3_$it") |
      tail -1 | tee -a "$raw" >/dev/null
  fi
done

# ---- 3. W4 on the C API ----
url=$(schema w4c)
say "W4 2000 threads: superstep on PostgreSQL"
"$side" W4 c-postgres 2000 "$url" | tee -a "$raw" >/dev/null
emit "{\"what\":\"w4_rows\",\"rows\":\"$(rows_of "$url")\",\"bytes\":$(bytes_of "$url"),\"runs\":4000}"
say "W4 2000 threads: superstep on SQLite"
"$side" W4 c-sqlite 2000 "$work" | tee -a "$raw" >/dev/null

# ---- 4. W4 through the queue ----
for k in 1 2 4; do
  url=$(schema "queue_$k")
  "$cli" serve "$root/tests/server/langgraph.json" --db "$url" --workers 0 --port 0 --quiet >"$work/api.out" &
  api=$!
  pids+=("$api")
  for _ in $(seq 40); do grep -q "listening on" "$work/api.out" 2>/dev/null && break; sleep 0.25; done
  port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/api.out")
  wpids=()
  for _ in $(seq "$k"); do
    "$cli" worker "$root/tests/server/langgraph.json" --db "$url" --workers 2 --quiet >/dev/null &
    wpids+=("$!")
    pids+=("$!")
  done
  sleep 1
  say "W4 through the queue: 1 API process, $k worker process(es) x 2 threads, 16 clients, $secs s"
  out=$("$load" --mode chain --conc 16 --secs "$secs" --url "http://127.0.0.1:$port" --pid "$api,$(IFS=,; echo "${wpids[*]}")")
  runs=$(psql "$url" -c "SELECT count(*) FROM sst_runs")
  emit "{\"what\":\"queue\",\"workers\":$k,\"load\":$out,\"rows\":\"$(rows_of "$url")\",\"bytes\":$(bytes_of "$url"),\"runs\":$runs}"
  kill "$api" "${wpids[@]}" 2>/dev/null || true
  wait "$api" "${wpids[@]}" 2>/dev/null || true
done

node "$root/bench/postgres_table.mjs" "$raw"
if [ -n "$jsonout" ]; then cp "$raw" "$jsonout"; fi
