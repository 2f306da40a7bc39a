#!/usr/bin/env bash
# PostgreSQL statements per run of `superstep serve` (issue 37): a throwaway cluster
# (tests/pg/cluster.sh, fsync on) with pg_stat_statements, one `superstep serve` on it,
# bench_server_load --mode chain (POST /threads, then runs/wait of the 3-node chain) for
# a few seconds, then calls and executor time per run of each statement, heaviest first.
# With --capi T: the C API's chain instead (bench_durable, T threads).
#
#   bash bench/durable/statements.sh --superstep BUILD/superstep --load BUILD/bench_server_load \
#       [--workers 2] [--conc 16] [--secs 5] [--durability sync]
#   bash bench/durable/statements.sh --capi 16 --driver BUILD/bench_durable [--secs 5]
#
# Calls per run are exact counts (the frames BEGIN, SAVEPOINT and COMMIT included);
# executor µs are the server's, without the messages around them. Compare calls between
# builds; time only within one run (the machine is shared).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cli="" load="" drv="" capi=0 workers=2 conc=16 secs=5 mode=sync
while [ $# -gt 0 ]; do
  case $1 in
  --superstep) cli=$2; shift ;;
  --load) load=$2; shift ;;
  --capi) capi=$2; shift ;;
  --driver) drv=$2; shift ;;
  --workers) workers=$2; shift ;;
  --conc) conc=$2; shift ;;
  --secs) secs=$2; shift ;;
  --durability) mode=$2; shift ;;
  *) echo "statements.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
if [ "$capi" -gt 0 ]; then
  [ -x "$drv" ] || { echo "statements.sh: --driver names the built bench_durable" >&2; exit 2; }
else
  [ -x "$cli" ] && [ -x "$load" ] || { echo "statements.sh: --superstep and --load name built programs" >&2; exit 2; }
fi
work=$(mktemp -d /tmp/sst-pgstat.XXXXXX)
srv=""
cleanup() {
  if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
  sh "$root/tests/pg/cluster.sh" stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
SST_PG_FSYNC=on sh "$root/tests/pg/cluster.sh" start "$work/pg" >&2
base=$(cat "$work/pg/url")
psql() { command psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
psql "$base" -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
sh "$root/tests/pg/cluster.sh" restart "$work/pg" >&2
psql "$base" -c "CREATE EXTENSION pg_stat_statements"
if [ "$capi" -gt 0 ]; then
  "$drv" --db "$base" --threads "$capi" --runs 20 --warmup 20 --mode "$mode" >/dev/null
  psql "$base" -c "SELECT pg_stat_statements_reset()" >/dev/null
  out=$("$drv" --db "$base" --threads "$capi" --secs "$secs" --warmup 0 --mode "$mode")
  runs=$(echo "$out" | sed -n 's/.*"runs":\([0-9]*\).*/\1/p')
  what="C API chain, $capi threads"
else
  "$cli" serve "$root/tests/server/langgraph.json" --db "$base" --workers "$workers" --port 0 --quiet >"$work/serve.out" 2>&1 &
  srv=$!
  port=""
  for _ in $(seq 1 200); do
    port=$(grep -o 'http://[0-9.]*:[0-9]*' "$work/serve.out" 2>/dev/null | head -1 | sed 's/.*://' || true)
    [ -n "$port" ] && break
    sleep 0.1
  done
  [ -n "$port" ] || { cat "$work/serve.out" >&2; exit 1; }
  "$load" --url "http://127.0.0.1:$port" --warmup 3 --durability "$mode" --mode chain \
    --conc "$conc" --secs 1 >/dev/null 2>&1
  psql "$base" -c "SELECT pg_stat_statements_reset()" >/dev/null
  before=$(psql "$base" -c "SELECT count(*) FROM sst_runs WHERE status = 'success'")
  "$load" --url "http://127.0.0.1:$port" --warmup 0 --durability "$mode" --mode chain \
    --conc "$conc" --secs "$secs" >"$work/load.out" 2>&1
  after=$(psql "$base" -c "SELECT count(*) FROM sst_runs WHERE status = 'success'")
  runs=$((after - before))
  what="serve --workers $workers, $conc clients"
fi
echo "runs: $runs ($what, $secs s, durability $mode, load $(cut -d' ' -f1 /proc/loadavg))"
psql "$base" -F $'\t' -c "
  SELECT round(sum(calls)::numeric / $runs, 2), round(sum(total_exec_time)::numeric * 1000 / $runs),
         left(regexp_replace(query, '\s+', ' ', 'g'), 110)
  FROM pg_stat_statements
  WHERE query NOT LIKE '%pg_stat_statements%' AND query NOT LIKE '%sst_runs WHERE status = ''success''%'
  GROUP BY query ORDER BY 1 DESC, 2 DESC" | awk -F'\t' '
  { n += $1; us += $2; printf "%7.2f %7d  %s\n", $1, $2, $3 }
  END { printf "%7.2f %7d  all (calls per run, executor us per run)\n", n, us }'
