#!/usr/bin/env bash
# Issue 37's benchmark: superstep's durable paths beside DBOS Transact and
# PostgreSQL's own commit rate, in one run, on one throwaway PostgreSQL 15 on
# 127.0.0.1 (fsync on, synchronous_commit on, checked; tests/pg/cluster.sh with
# SST_PG_FSYNC=on, as ../shared/peers/dbos/start_pg.sh), stopped afterwards.
#
#   bash bench/durable/run.sh [--secs S] [--tree LABEL=DIR]... [--json FILE] [--md FILE]
#                             [--dbs "postgres sqlite"] [--modes "sync async exit"]
#   QUICK=1 bash bench/durable/run.sh      # smoke run, a few minutes on a busy box
#
# Measures, S seconds each (default 8; QUICK: 1):
#  - pgbench, single-row INSERT commits/s, 1 and 16 clients;
#  - DBOS 5.3 D1 (a 3-step workflow, in-process; dbos_d1.mjs), 1 and 16 in flight;
#  and for every tree (default: this one, labelled by its commit), in each
#  durability mode (sync, async, exit; a mode the tree rejects is reported so):
#  - the 3-node chain through the C API (bench_durable), 1 and 16 threads,
#    on PostgreSQL and on a SQLite file;
#  - `superstep serve` with 16 HTTP clients (bench_server_load --mode chain),
#    --workers 2 and 8, on PostgreSQL and on a SQLite file;
#  - 1 API process (serve --workers 0) + N `superstep worker --workers 2`
#    processes, N = 1 and 4, on PostgreSQL;
#  - a 1 000-step stream (counter, stream_mode updates) on SQLite, sync and async.
# Each figure: runs/s, p50/p99 latency, superstep's CPU per run, PostgreSQL's
# CPU per run, commits per run (PostgreSQL transaction ids used) and flushes
# per run (fdatasync + fsync calls of PostgreSQL's processes, or of superstep's
# process on SQLite, counted by `perf stat` on syscall tracepoints; "-" without
# perf), and the 1-minute load average when it was taken. Then the issue's
# goals as ratios within this run, one PASS/MISS line each (table.mjs).
# --dbs and --modes keep the superstep phases of those databases and modes only
# (the queue phases are PostgreSQL's, the stream SQLite's); goals whose rows
# were not measured print as n/a.
#
# --tree LABEL=DIR: measure the superstep source tree DIR (e.g. a worktree of
# another branch) with this tree's harness; repeat to put several side by side
# (the peers are measured once). Each tree is built (Release) in
# build-durable/LABEL. Nothing is downloaded at run time except DBOS's pinned
# packages (npm ci, package-lock.json) when bench/durable/node_modules lacks them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
quick=${QUICK:-0}
[ "$quick" = 0 ] || quick=1
secs="" jsonout="" mdout="" dbs="postgres sqlite" modes="sync async exit"
trees=()
while [ $# -gt 0 ]; do
  case "$1" in
    --secs) secs=$2; shift ;;
    --tree) trees+=("$2"); shift ;;
    --json) jsonout=$2; shift ;;
    --md) mdout=$2; shift ;;
    --dbs) dbs=$2; shift ;;
    --modes) modes=$2; shift ;;
    *) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then secs=${secs:-1}; warm=20; dwarm=30; reps=1; else secs=${secs:-8}; warm=100; dwarm=200; reps=3; fi
[ ${#trees[@]} -gt 0 ] || trees=("this=$root")
say() { echo "bench/durable [$(printf '%3d' "$SECONDS") s, load $(cut -d' ' -f1 /proc/loadavg)]: $*" >&2; }
die() { say "$*"; exit 1; }

pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
[ -n "$pgbin" ] && [ -x "$pgbin/initdb" ] || die "PostgreSQL's server is not installed (apt-get install postgresql)"
command -v node >/dev/null && command -v npm >/dev/null || die "node and npm are needed for DBOS (apt-get install nodejs npm)"
have_perf=0
if perf stat -x, -e syscalls:sys_enter_fdatasync -- true >/dev/null 2>&1; then have_perf=1; else
  say "perf cannot count syscalls here: flushes per run are not measured"
fi
if [ ! -d "$here/node_modules/@dbos-inc/dbos-sdk" ]; then
  say "installing DBOS's pinned packages (npm ci) into bench/durable/node_modules"
  (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
fi

# ---- build every tree ----
launcher=()
if command -v ccache >/dev/null; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache); fi
mkdir -p "$root/build-durable"
labels=() dirs=() commits=()
for t in "${trees[@]}"; do
  label=${t%%=*} dir=${t#*=}
  [[ "$label" =~ ^[A-Za-z0-9_.-]+$ ]] || die "--tree $t: LABEL must be letters, digits, '.', '_' or '-'"
  [ -f "$dir/CMakeLists.txt" ] || die "--tree $t: $dir is not a superstep source tree"
  dir=$(cd "$dir" && pwd)
  commit=$(git -C "$dir" rev-parse --short HEAD 2>/dev/null || echo unknown)
  if [ -n "$(git -C "$dir" status --porcelain --untracked-files=no 2>/dev/null)" ]; then commit="$commit+changes"; fi
  [ "$label" != this ] || label=$(git -C "$dir" rev-parse --abbrev-ref HEAD 2>/dev/null || echo this)
  b=$root/build-durable/$label
  say "building $label ($commit) from $dir in $b (Release)"
  cmake -S "$here" -B "$b" -DSST_SOURCE="$dir" -DCMAKE_BUILD_TYPE=Release "${launcher[@]}" >"$b.cmake.log" 2>&1 ||
    { mkdir -p "$b"; tail -20 "$b.cmake.log" >&2; die "configuring $label failed"; }
  cmake --build "$b" -j2 --target bench_durable superstep_cli bench_server_load >"$b.build.log" 2>&1 ||
    { tail -20 "$b.build.log" >&2; die "building $label failed (log: $b.build.log)"; }
  labels+=("$label") dirs+=("$dir") commits+=("$commit")
done

work=$(mktemp -d /tmp/sst-bench-durable.XXXXXX)
raw=$work/raw.jsonl
: >"$raw"
bg=() # processes this script started and has not reaped
cleanup() {
  for p in "${bg[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${bg[@]}"; do wait "$p" 2>/dev/null || true; done
  sh "$root/tests/pg/cluster.sh" stop "$work/pg" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# ---- the cluster ----
SST_PG_FSYNC=on sh "$root/tests/pg/cluster.sh" start "$work/pg" >&2
[ -f "$work/pg/url" ] || die "PostgreSQL did not start"
base=$(cat "$work/pg/url")
pgdata=$(cat "$work/pg/cluster")/data
psql() { command psql -X -qAt -v ON_ERROR_STOP=1 "$@"; }
settings=$(psql "$base" -c "SELECT string_agg(name || '=' || setting, ' ' ORDER BY name) FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'server_version')")
[[ " $settings " == *" fsync=on "* && " $settings " == *" synchronous_commit=on "* ]] ||
  die "unexpected durability settings: $settings"
say "PostgreSQL: $settings"
postmaster=$(head -1 "$pgdata/postmaster.pid")

loadavg() { cut -d' ' -f1 /proc/loadavg; }
emit() { echo "$1" >>"$raw"; }
schema() { # NAME: a fresh schema, printed as a URL whose search_path is it
  psql "$base" -c "SET client_min_messages=warning; DROP SCHEMA IF EXISTS $1 CASCADE; CREATE SCHEMA $1"
  echo "$base?options=-csearch_path%3D$1"
}
next_xid() { psql "$base" -c "SELECT pg_snapshot_xmax(pg_current_snapshot())"; }
pg_cpu_ms() { # CPU of the cluster so far: the postmaster, its live children, its reaped ones
  local pm=$postmaster ticks
  ticks=$(
    {
      awk '{ sub(/.*\) /, ""); print $12 + $13 + $14 + $15 }' "/proc/$pm/stat"
      for c in $(cat "/proc/$pm/task/$pm/children" 2>/dev/null); do
        awk '{ sub(/.*\) /, ""); print $12 + $13 }' "/proc/$c/stat" 2>/dev/null || true
      done
    } | awk '{ s += $1 } END { print s + 0 }'
  )
  echo $((ticks * 1000 / $(getconf CLK_TCK)))
}
# pg_window_start / pg_window_stop: PostgreSQL's transaction ids, WAL flushes
# (pg_stat_wal.wal_sync) and CPU over a window, as a JSON object. The window
# spans whole client processes: stop stops them and waits for their server
# backends to exit, which is when a backend's statistics are written.
pg_window_start() {
  w_xid=$(next_xid) w_cpu=$(pg_cpu_ms)
  w_sync=$(psql "$base" -c "SELECT wal_sync FROM pg_stat_wal")
}
pg_window_stop() {
  local i x c f
  for i in $(seq 1 100); do
    [ "$(psql "$base" -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")" = 0 ] && break
    sleep 0.1
  done
  x=$(next_xid) c=$(pg_cpu_ms)
  f=$(psql "$base" -c "SELECT wal_sync FROM pg_stat_wal")
  echo "{\"xids\":$((x - w_xid)),\"flushes\":$((f - w_sync)),\"cpu_ms\":$((c - w_cpu))}"
}
# start_counted NAME CMD...: starts CMD in the background, under `perf stat`
# counting its fdatasync and fsync calls (all threads) into $work/NAME.perf
# when perf can; sets $started to CMD's own process id.
start_counted() {
  local name=$1 p i; shift
  if [ "$have_perf" = 1 ]; then
    perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -o "$work/$name.perf" -- "$@" &
    p=$!
    bg+=("$p")
    started=""
    for i in $(seq 1 100); do
      started=$(cat "/proc/$p/task/$p/children" 2>/dev/null | awk '{ print $1 }')
      [ -n "$started" ] && break
      sleep 0.05
    done
    [ -n "$started" ] || started=$p
    eval "perf_$name=$p"
  else
    "$@" &
    started=$!
    bg+=("$started")
    eval "perf_$name=$started"
  fi
}
# flushes_of NAME: the calls counted for the process started as NAME, once it
# has exited (null without perf).
flushes_of() {
  [ "$have_perf" = 1 ] || { echo null; return 0; }
  awk -F, '/sys_enter_f(data)?sync/ { s += $1; n++ } END { if (n) print s + 0; else print "null" }' "$work/$1.perf" 2>/dev/null || echo null
}

# ---- 1. PostgreSQL's own commit rate ----
psql "$base" -c "CREATE TABLE narrow(id bigserial PRIMARY KEY, v int NOT NULL)"
echo "INSERT INTO narrow (v) VALUES (1);" >"$work/one.sql"
for clients in 1 16; do
  say "pgbench: single-row INSERT commits, $clients client(s), $secs s"
  pg_window_start
  out=$("$pgbin/pgbench" -n -M prepared -c "$clients" -j 2 -T "$secs" -f "$work/one.sql" "$base" 2>/dev/null)
  pgw=$(pg_window_stop)
  tps=$(awk '/^tps/ { print $3; exit }' <<<"$out")
  lat=$(awk '/^latency average/ { print $4; exit }' <<<"$out")
  n=$(awk '/number of transactions actually processed/ { print $NF; exit }' <<<"$out")
  emit "{\"what\":\"pgbench\",\"clients\":$clients,\"runs\":$n,\"runs_per_s\":$tps,\"lat_avg_ms\":$lat,\"pg\":$pgw,\"loadavg1\":$(loadavg)}"
done

# ---- 2. DBOS D1 ----
for conc in 1 16; do
  say "DBOS D1, $conc in flight, $secs s"
  pg_window_start
  out=$(cd "$here" && node dbos_d1.mjs --url="$base" --conc="$conc" --secs="$secs" --warmup="$dwarm" 2>"$work/dbos.err" | tail -1) ||
    { tail -5 "$work/dbos.err" >&2; die "DBOS D1 failed"; }
  pgw=$(pg_window_stop)
  emit "{\"what\":\"dbos\",\"conc\":$conc,\"r\":$out,\"pg\":$pgw,\"loadavg1\":$(loadavg)}"
done

# ---- 3. superstep, per tree ----
has() { [[ " $1 " == *" $2 "* ]]; } # LIST WORD
wait_listening() { # FILE PID: the port once "listening on" appears
  local i
  for i in $(seq 1 200); do
    if grep -q "listening on" "$1" 2>/dev/null; then
      sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$1" | head -1
      return 0
    fi
    kill -0 "$2" 2>/dev/null || break
    sleep 0.1
  done
  return 1
}
stop_all() { # PIDS...: stops processes this script started (or their perf) and reaps them
  local p q i keep=()
  kill "$@" 2>/dev/null || true
  for p in "$@"; do
    for i in $(seq 1 200); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
    wait "$p" 2>/dev/null || true
  done
  for q in "${bg[@]}"; do
    if kill -0 "$q" 2>/dev/null; then keep+=("$q"); else wait "$q" 2>/dev/null || true; fi
  done
  bg=("${keep[@]}")
}
# server_phase WHAT DB MODE EXTRAJSON WORKERS PROCS LOADARGS...: a fresh
# `superstep serve` (--workers WORKERS) on a fresh database, PROCS
# `superstep worker --workers 2` processes beside it, one bench_server_load
# run (3 sequential warm-up runs, then LOADARGS) in durability MODE, all
# stopped again; one record. PostgreSQL's figures span the processes' whole
# lives; so do the flushes of a SQLite server.
server_phase() {
  local what=$1 db=$2 mode=$3 extra=$4 workers=$5 procs=$6; shift 6
  local target srv port out rc=0 pgw=null sf=null wp=() k
  phase=$((phase + 1))
  k=$phase
  if [ "$db" = postgres ]; then target=$(schema "p$k"); else target=$work/p$k.db; fi
  if [ "$db" = postgres ]; then
    pg_window_start
    "$cli" serve "$graphs" --db "$target" --workers "$workers" --port 0 --quiet >"$work/serve.out" 2>&1 &
    srv=$!
    bg+=("$srv")
  else
    start_counted srv "$cli" serve "$graphs" --db "$target" --workers "$workers" --port 0 --quiet >"$work/serve.out" 2>&1
    srv=$started
  fi
  port=$(wait_listening "$work/serve.out" "$srv") || { tail -5 "$work/serve.out" >&2; die "$label: serve did not start"; }
  for _ in $(seq 1 "$procs"); do
    "$cli" worker "$graphs" --db "$target" --workers 2 --quiet >>"$work/worker.out" 2>&1 &
    wp+=("$!")
    bg+=("$!")
  done
  out=$("$load" --url "http://127.0.0.1:$port" --warmup 3 --durability "$mode" \
    --pid "$srv$(printf ',%s' "${wp[@]}")" "$@" 2>"$work/load.err") || rc=$?
  if [ "$db" = postgres ]; then
    stop_all "$srv" "${wp[@]}"
    pgw=$(pg_window_stop)
  else
    local pp
    pp=$(eval "echo \$perf_srv")
    stop_all "$srv" # perf writes its counts once serve has exited
    wait "$pp" 2>/dev/null || true
    sf=$(flushes_of srv)
    rm -f "$target" "$target-wal" "$target-shm"
  fi
  local rec="\"what\":\"$what\",\"tree\":\"$label\",\"commit\":\"$commit\",\"db\":\"$db\",\"mode\":\"$mode\",$extra"
  if [ "$rc" != 0 ] && ! grep -q '"runs":[1-9]\|"update_events":[1-9]' <<<"$out"; then
    say "  $mode: failed or not supported by this tree: $(head -c 300 "$work/load.err")"
    emit "{$rec,\"failed\":$(head -c 600 "$work/load.err" | jq -Rs .),\"loadavg1\":$(loadavg)}"
    return 0
  fi
  [ -n "$out" ] || out=null
  emit "{$rec,\"r\":$out,\"exit\":$rc,\"warmup_runs\":3,\"pg\":$pgw,\"sst_flushes\":$sf,\"loadavg1\":$(loadavg)}"
}
phase=0

for i in "${!labels[@]}"; do
  label=${labels[$i]} commit=${commits[$i]}
  b=$root/build-durable/$label
  cli=$(find "$b/sst" -maxdepth 1 -name superstep -type f -perm -u+x | head -1)
  drv=$b/bench_durable load=$b/bench_server_load
  [ -x "$cli" ] && [ -x "$drv" ] && [ -x "$load" ] || die "$label: the build lacks superstep, bench_durable or bench_server_load"
  tj="\"what\":\"%s\",\"tree\":\"$label\",\"commit\":\"$commit\""
  graphs=${dirs[$i]}/tests/server/langgraph.json
  [ -f "$graphs" ] || graphs=$root/tests/server/langgraph.json

  # C API
  for db in $dbs; do
    for threads in 1 16; do
      for mode in $modes; do
        say "$label: C API chain, $db, $threads thread(s), $mode, $secs s"
        pgw=null sf=null out="" rc=0
        if [ "$db" = postgres ]; then
          target=$(schema "capi_${threads}_$mode")
          pg_window_start
          out=$("$drv" --db "$target" --threads "$threads" --secs "$secs" --warmup "$warm" --mode "$mode" 2>"$work/drv.err") || rc=$?
          pgw=$(pg_window_stop)
        else
          target=$work/capi-$threads-$mode.db
          if [ "$have_perf" = 1 ]; then
            out=$(perf stat -x, -e syscalls:sys_enter_fdatasync,syscalls:sys_enter_fsync -o "$work/drv.perf" -- \
              "$drv" --db "$target" --threads "$threads" --secs "$secs" --warmup "$warm" --mode "$mode" 2>"$work/drv.err") || rc=$?
            sf=$(awk -F, '/sys_enter_f(data)?sync/ { s += $1 } END { print s + 0 }' "$work/drv.perf")
          else
            out=$("$drv" --db "$target" --threads "$threads" --secs "$secs" --warmup "$warm" --mode "$mode" 2>"$work/drv.err") || rc=$?
          fi
          rm -f "$target" "$target-wal" "$target-shm"
        fi
        rec=$(printf "$tj" capi)
        if [ "$rc" != 0 ] || [ -z "$out" ]; then
          say "  failed: $(tail -2 "$work/drv.err")"
          emit "{$rec,\"db\":\"$db\",\"mode\":\"$mode\",\"threads\":$threads,\"failed\":$(tail -3 "$work/drv.err" | jq -Rs .),\"loadavg1\":$(loadavg)}"
        else
          emit "{$rec,\"db\":\"$db\",\"mode\":\"$mode\",\"threads\":$threads,\"r\":$out,\"pg\":$pgw,\"sst_flushes\":$sf,\"loadavg1\":$(loadavg)}"
        fi
      done
    done
  done

  # superstep serve, 16 HTTP clients
  for db in $dbs; do
    for workers in 2 8; do
      for mode in $modes; do
        say "$label: serve --workers $workers, $db, 16 clients, $mode, $secs s"
        server_phase serve "$db" "$mode" "\"workers\":$workers,\"clients\":16" "$workers" 0 \
          --mode chain --conc 16 --secs "$secs"
      done
    done
  done

  # 1 API process + N worker processes on PostgreSQL
  for n in 1 4; do
    has "$dbs" postgres || break
    for mode in $modes; do
      say "$label: serve --workers 0 + $n worker process(es) x 2 threads, postgres, 16 clients, $mode, $secs s"
      server_phase queue postgres "$mode" "\"worker_processes\":$n,\"clients\":16" 0 "$n" \
        --mode chain --conc 16 --secs "$secs"
    done
  done

  # a 1 000-step stream on SQLite, 3 times each (QUICK: once)
  for mode in sync async; do
    has "$dbs" sqlite && has "$modes" "$mode" || continue
    for rep in $(seq 1 "$reps"); do
      say "$label: stream of 1000 steps, sqlite, $mode, $rep of $reps"
      server_phase stream sqlite "$mode" "\"steps\":1000,\"rep\":$rep" 2 0 --mode stream --n 1000
    done
  done
done

machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -sr), PostgreSQL: $settings, phases $secs s"
[ -z "$jsonout" ] || cp "$raw" "$jsonout"
if [ -n "$mdout" ]; then
  node "$here/table.mjs" "$raw" "$machine" | tee "$mdout"
else
  node "$here/table.mjs" "$raw" "$machine"
fi
