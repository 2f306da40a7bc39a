#!/usr/bin/env bash
# Where a run's time goes as workers or worker processes are added (issue 37, item 4):
# one throwaway cluster (tests/pg/cluster.sh, fsync on) with pg_stat_statements, then
# per configuration a fresh schema, its processes, 16 clients of bench_server_load
# --mode chain for --secs, and, over that window only (after a warm-up):
#   runs, PostgreSQL's CPU and superstep's CPU per run (/proc), transactions per run
#   (pg_stat_database), statements per run by kind (pg_stat_statements: claims, NOTIFYs,
#   event appends, ...), wait events of the client backends sampled every 10 ms from
#   pg_stat_activity (and ungranted locks from pg_locks), and with --perf the
#   machine's samples by command and the top symbols of postgres and superstep.
#
#   bash bench/durable/profile.sh --superstep BUILD/superstep --load BUILD/bench_server_load \
#       [--configs "w2 w8 p1 p4"] [--secs 6] [--perf]
#
# Configurations: wN = `serve --workers N`; pN = `serve --workers 0` + N `superstep worker
# --workers 2` processes. Counts are exact; CPU and waits are one run's, on a shared
# machine: compare configurations of one run only.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
cli="" load="" configs="w2 w8 p1 p4" secs=6 perf=0 conc=16
while [ $# -gt 0 ]; do
  case $1 in
  --superstep) cli=$2; shift ;;
  --load) load=$2; shift ;;
  --configs) configs=$2; shift ;;
  --secs) secs=$2; shift ;;
  --conc) conc=$2; shift ;;
  --perf) perf=1 ;;
  *) echo "profile.sh: unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$cli" ] && [ -x "$load" ] || { echo "profile.sh: --superstep and --load name built programs" >&2; exit 2; }
work=$(mktemp -d /tmp/sst-pgprof.XXXXXX)
bg=()
cleanup() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done
  sh "$root/tests/pg/cluster.sh" stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
SST_PG_FSYNC=on sh "$root/tests/pg/cluster.sh" start "$work/pg" >&2
base=$(cat "$work/pg/url")
pgdata=$(cat "$work/pg/cluster")/data
psql() { command psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
psql "$base" -c "ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'"
sh "$root/tests/pg/cluster.sh" restart "$work/pg" >&2
psql "$base" -c "CREATE EXTENSION pg_stat_statements"
postmaster=$(head -1 "$pgdata/postmaster.pid")
graphs=$root/tests/server/langgraph.json
ticks() { # PIDS...: their CPU so far (ms), children reaped by them included
  local p
  for p in "$@"; do awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$p/stat" 2>/dev/null || true; done |
    awk -v hz="$(getconf CLK_TCK)" '{ s += $1 } END { printf "%d\n", s * 1000 / hz }'
}
pg_pids() { echo "$postmaster $(cat "/proc/$postmaster/task/$postmaster/children" 2>/dev/null)"; }
xacts() { psql "$base" -c "SELECT sum(xact_commit + xact_rollback) FROM pg_stat_database"; }
wait_listening() {
  local i
  for i in $(seq 1 200); do
    if grep -q "listening on" "$1" 2>/dev/null; then
      sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$1" | head -1
      return 0
    fi
    sleep 0.1
  done
  return 1
}
n=0
for cfg in $configs; do
  n=$((n + 1))
  k=${cfg#?}
  psql "$base" -c "SET client_min_messages=warning; DROP SCHEMA IF EXISTS c$n CASCADE; CREATE SCHEMA c$n"
  target="$base?options=-csearch_path%3Dc$n"
  procs=()
  if [ "${cfg:0:1}" = w ]; then
    "$cli" serve "$graphs" --db "$target" --workers "$k" --port 0 --quiet >"$work/serve.out" 2>&1 &
    srv=$!
    what="serve --workers $k"
  else
    "$cli" serve "$graphs" --db "$target" --workers 0 --port 0 --quiet >"$work/serve.out" 2>&1 &
    srv=$!
    what="serve --workers 0 + $k worker processes (--workers 2)"
  fi
  bg+=("$srv")
  port=$(wait_listening "$work/serve.out") || { cat "$work/serve.out" >&2; exit 1; }
  if [ "${cfg:0:1}" = p ]; then
    for _ in $(seq 1 "$k"); do
      "$cli" worker "$graphs" --db "$target" --workers 2 --quiet >>"$work/worker.out" 2>&1 &
      procs+=("$!")
      bg+=("$!")
    done
  fi
  ours=("$srv" "${procs[@]}")
  # Warm-up: the statements prepared, the pools filled.
  "$load" --url "http://127.0.0.1:$port" --warmup 3 --mode chain --conc "$conc" --secs 1 >/dev/null 2>&1
  psql "$base" -c "SELECT pg_stat_statements_reset()" >/dev/null
  runs0=$(psql "$base" -c "SELECT count(*) FROM c$n.sst_runs WHERE status = 'success'")
  x0=$(xacts) pc0=$(ticks $(pg_pids)) sc0=$(ticks "${ours[@]}")
  "$load" --url "http://127.0.0.1:$port" --warmup 0 --mode chain --conc "$conc" --secs "$secs" \
    >"$work/load.out" 2>&1 &
  lp=$!
  bg+=("$lp")
  # The sampler: every 10 ms for the window, the client backends' states and wait events.
  psql "$base" -F $'\t' -c "
    CREATE TEMP TABLE s(kind text);
    DO \$\$ DECLARE t0 timestamptz := clock_timestamp(); BEGIN
      WHILE clock_timestamp() < t0 + interval '$((secs - 1)) seconds' LOOP
        PERFORM pg_stat_clear_snapshot();
        INSERT INTO s SELECT CASE WHEN state = 'active' THEN 'active: ' ||
            coalesce(wait_event_type || '/' || wait_event, 'CPU') ELSE coalesce(state, '?') ||
            coalesce(' (' || wait_event || ')', '') END
          FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()
          AND datname = current_database();
        INSERT INTO s SELECT 'ungranted lock: ' || locktype || coalesce(' ' || mode, '')
          FROM pg_locks WHERE NOT granted;
        INSERT INTO s VALUES ('(sample)');
        PERFORM pg_sleep(0.01);
      END LOOP; END \$\$;
    SELECT count(*), kind FROM s GROUP BY kind ORDER BY 1 DESC" >"$work/waits.out" 2>&1 &
  sp=$!
  bg+=("$sp")
  if [ "$perf" = 1 ]; then
    perf record -a -F 499 -g -o "$work/perf.data" -- sleep "$((secs - 1))" >/dev/null 2>&1 || true
  fi
  wait "$lp" || true
  wait "$sp" || true
  x1=$(xacts) pc1=$(ticks $(pg_pids)) sc1=$(ticks "${ours[@]}")
  runs1=$(psql "$base" -c "SELECT count(*) FROM c$n.sst_runs WHERE status = 'success'")
  runs=$((runs1 - runs0))
  [ "$runs" -gt 0 ] || { echo "$what: no runs" >&2; cat "$work/load.out" >&2; exit 1; }
  echo "== $what, $conc clients, $secs s: $runs runs ($(awk -v r="$runs" -v s="$secs" 'BEGIN { printf "%.0f", r / s }') runs/s), load $(cut -d' ' -f1 /proc/loadavg)"
  awk -v r="$runs" -v pc=$((pc1 - pc0)) -v sc=$((sc1 - sc0)) -v x=$((x1 - x0)) 'BEGIN {
    printf "   per run: PostgreSQL CPU %.2f ms, superstep CPU %.2f ms, transactions %.2f (all databases; the sampler'\''s included)\n", pc / r, sc / r, x / r }'
  echo "   statements per run by kind (calls, executor us):"
  psql "$base" -F $'\t' -c "
    SELECT CASE
      WHEN query ~* 'pg_notify' AND query ~* 'sst_run_events' THEN 'event append + NOTIFY (relay)'
      WHEN query ~* 'FROM sst_run_events' THEN 'event read (relay feed)'
      WHEN query ~* 'SELECT NULL::text' THEN 'claim probe (outside a transaction)'
      WHEN query ~* 'WITH RECURSIVE' THEN 'claim: owners probe'
      WHEN query ~* 'UPDATE sst_runs r SET status = .running' THEN 'claim: take'
      WHEN query ~* 'SKIP LOCKED' THEN 'claim'
      WHEN query ~* 'pg_notify' THEN 'queue write with NOTIFY'
      WHEN query ~* '^(BEGIN|COMMIT|ROLLBACK|SAVEPOINT|RELEASE|SET LOCAL)' THEN 'frame: ' || split_part(query, ' ', 1)
      WHEN query ~* 'sst_runs' THEN 'queue other'
      WHEN query ~* 'sst_checkpoint' THEN 'checkpointer'
      WHEN query ~* 'sst_threads|sst_thread' THEN 'threads'
      ELSE 'other: ' || left(regexp_replace(query, '\s+', ' ', 'g'), 60) END AS kind,
      round(sum(calls)::numeric / $runs, 2), round(sum(total_exec_time)::numeric * 1000 / $runs)
    FROM pg_stat_statements
    WHERE query NOT LIKE '%pg_stat%' AND query NOT LIKE '%status = ''success''%' AND query NOT LIKE '%clock_timestamp%'
      AND query NOT LIKE '%pg_database%' AND query NOT LIKE '%TEMP TABLE%' AND query NOT LIKE '%FROM s GROUP%'
      AND query NOT LIKE '%INSERT INTO s %' AND query NOT LIKE '%pg_sleep%'
    GROUP BY 1 ORDER BY 2 DESC" | awk -F'\t' '{ printf "   %7.2f %7d  %s\n", $2, $3, $1; c += $2; u += $3 }
      END { printf "   %7.2f %7d  all\n", c, u }'
  echo "   sampled client backends (count per 10 ms sample, over the window):"
  awk -F'\t' 'NR == FNR && $2 == "(sample)" { s = $1 } NR != FNR && $2 != "(sample)" && s > 0 {
      printf "   %7.2f  %s\n", $1 / s, $2 }' "$work/waits.out" "$work/waits.out" | head -14 || true
  if [ "$perf" = 1 ] && [ -f "$work/perf.data" ]; then
    echo "   perf (whole machine, by command):"
    perf report -i "$work/perf.data" --no-children --sort comm --stdio -g none 2>/dev/null | grep -v '^#' | grep '%' | head -8 | sed 's/^/   /' || true
    for comm in postgres superstep; do
      echo "   perf, top symbols of $comm:"
      perf report -i "$work/perf.data" --no-children --comms "$comm" --sort dso,sym --stdio -g none 2>/dev/null |
        grep -v '^#' | grep '%' | head -14 | sed 's/^/   /' || true
    done
    rm -f "$work/perf.data"
  fi
  kill "${ours[@]}" 2>/dev/null || true
  for p in "${ours[@]}"; do wait "$p" 2>/dev/null || true; done
  bg=()
done
