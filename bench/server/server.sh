#!/usr/bin/env bash
# `superstep serve` next to LangGraph.js's own server (@langchain/langgraph-api
# 1.5.1 through `langgraphjs dev`, in-memory), in one run, with the same load
# generator (bench_server_load: libcurl multi, one thread) against each (issue 17).
#
#   bash bench/server/server.sh [--quick] [--no-peer] [--build DIR] [--secs S]
#                               [--peer-secs S] [--perf DIR] [--json FILE]
#
# Phases, on a fresh server each: warm-up; (a) 1 client, threads.create +
# runs/wait "chain" in a loop; (b) 16 clients doing that; (b2) 16 clients on
# stateless /runs/wait; (c) runs/stream of "counter" n=1000, stream_mode
# updates, 3 times (median); (d) the server's VmHWM / VmRSS (/proc/PID/status)
# and CPU time per phase (utime+stime, /proc/PID/stat), per run.
# Phases last 10 s for superstep and 30 s for LangGraph.js (it does ~2 runs/s;
# --peer-secs); --quick: 3 s each, and LangGraph.js only without --no-peer.
# --perf DIR: `perf record --call-graph dwarf` on superstep's server for 5 s
# during (b); DIR gets perf.data, top_symbols.txt and summary.txt
# (bench/server/perf_summary.py: components, SQLite work by caller); then 4 s
# of a counter stream with n=20000 (summary_stream.txt).
# superstep: Release build (default build-rel), its graphs from
# tests/server/langgraph.json, --db a fresh file in /tmp, --workers 2, --quiet.
# LangGraph.js: the pinned packages of /work/shared/peers/langgraphjs-server
# (package.json + package-lock.json) installed once into bench/peers/
# langgraphjs-server (git-ignored) with its graphs.ts, started offline as its
# start_server.sh does.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
peer_src=${PEER_SRC:-/work/shared/peers/langgraphjs-server}
quick=0 nopeer=0 build=$root/build-rel secs="" psecs="" perfdir="" jsonout=""
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --no-peer) nopeer=1 ;;
    --build) build=$2; shift ;;
    --secs) secs=$2; shift ;;
    --peer-secs) psecs=$2; shift ;;
    --perf) perfdir=$2; shift ;;
    --json) jsonout=$2; shift ;;
    *) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
if [ "$quick" = 1 ]; then secs=${secs:-3}; psecs=${psecs:-3}; else secs=${secs:-10}; psecs=${psecs:-30}; fi
say() { echo "bench/server: $*" >&2; }

say "building superstep and bench_server_load (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSST_BUILD_TESTS=OFF -DSST_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j2 --target superstep_cli bench_server_load >/dev/null
cli=$build/superstep
load=$build/bench/bench_server_load

work=$(mktemp -d /tmp/sst-bench-server.XXXXXX)
raw=$work/raw.jsonl
: >"$raw"
SRV="" CLI=""
cleanup() {
  [ -n "$SRV" ] && kill "$SRV" 2>/dev/null || true
  [ -n "$CLI" ] && kill "$CLI" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

free_port() { # the first port from $1 on that nothing listens on
  local p=$1
  while ss -ltnH "sport = :$p" | grep -q .; do p=$((p + 1)); done
  echo "$p"
}
wait_ok() { # URL SECONDS
  local i
  for i in $(seq 1 $(($2 * 10))); do
    curl -sf -m 1 "$1/ok" >/dev/null && return 0
    sleep 0.1
  done
  return 1
}
status_kib() { awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"; }

# ld ARGS...: one bench_server_load run, its JSON in $work/out; stops the
# benchmark with superstep's exit status and log when its server died.
ld() {
  if "$load" "$@" >"$work/out"; then return 0; fi
  say "bench_server_load $* failed"
  if [ -n "$SRV" ] && ! kill -0 "$SRV" 2>/dev/null; then
    local rc=0; wait "$SRV" || rc=$?
    say "superstep serve died (exit status $rc); its output:"; tail -20 "$work/serve.log" >&2
    SRV=""
  fi
  exit 1
}

# bench IMPL URL PID SECS: every phase against one server; JSON lines to $raw.
bench() {
  local impl=$1 url=$2 pid=$3 s=$4 i
  rec() { echo "{\"impl\":\"$impl\",\"phase\":\"$1\",\"r\":$2}" >>"$raw"; }
  rec start "{\"vmhwm_kib\":$(status_kib "$pid" VmHWM),\"vmrss_kib\":$(status_kib "$pid" VmRSS)}"
  say "$impl: warm-up"
  ld --url "$url" --mode chain --conc 4 --secs 1 --warmup 3
  say "$impl: (a) 1 client, $s s"
  ld --url "$url" --mode chain --conc 1 --secs "$s" --warmup 0 --pid "$pid"; rec a "$(cat "$work/out")"
  say "$impl: (b) 16 clients, $s s"
  if [ -n "$perfdir" ] && [ "$impl" = superstep ]; then
    mkdir -p "$perfdir"
    (sleep 1; perf record -q -F 999 --call-graph dwarf,16384 -p "$pid" -o "$perfdir/perf.data" -- sleep 5 >/dev/null 2>&1) &
    local perfjob=$!
  fi
  ld --url "$url" --mode chain --conc 16 --secs "$s" --warmup 0 --pid "$pid"; rec b "$(cat "$work/out")"
  if [ -n "${perfjob:-}" ]; then wait "$perfjob" || say "perf record failed"; fi
  say "$impl: (b2) 16 clients, stateless /runs/wait, $s s"
  ld --url "$url" --mode stateless --conc 16 --secs "$s" --warmup 0 --pid "$pid"; rec b2 "$(cat "$work/out")"
  if [ -n "$perfdir" ] && [ "$impl" = superstep ]; then
    say "$impl: perf of one stream of counter n=20000 (not in the table)"
    (perf record -q -F 999 --call-graph dwarf,16384 -p "$pid" -o "$perfdir/perf_stream.data" -- sleep 4 >/dev/null 2>&1) &
    local perfjob2=$!
    sleep 0.5
    ld --url "$url" --mode stream --n 20000 --pid "$pid"; cp "$work/out" "$perfdir/stream_20000.json"
    wait "$perfjob2" || say "perf record failed"
  fi
  for i in 1 2 3; do
    say "$impl: (c) stream counter n=1000, $i of 3"
    ld --url "$url" --mode stream --n 1000 --pid "$pid"; rec c "$(cat "$work/out")"
  done
  rec end "{\"vmhwm_kib\":$(status_kib "$pid" VmHWM),\"vmrss_kib\":$(status_kib "$pid" VmRSS)}"
}

# ---- superstep ----
port=$(free_port 2231)
db=$work/serve.db
"$cli" serve "$root/tests/server/langgraph.json" --port "$port" --db "$db" --workers 2 --quiet \
  >"$work/serve.log" 2>&1 &
SRV=$!
url=http://127.0.0.1:$port
wait_ok "$url" 20 || { say "superstep serve did not come up"; exit 1; }
sversion=$("$cli" --version 2>/dev/null | head -1 | sed "s/^superstep //" || true)
bench superstep "$url" "$SRV" "$secs"
kill "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=""
if [ -n "$perfdir" ] && [ -f "$perfdir/perf.data" ]; then
  perf report -i "$perfdir/perf.data" --no-children --stdio --sort dso,symbol -g none 2>/dev/null \
    | grep -E '^ +[0-9]' | head -60 >"$perfdir/top_symbols.txt" || true
  perf script -i "$perfdir/perf.data" --no-inline -F comm,tid,ip,sym,dso 2>/dev/null \
    | python3 "$root/bench/server/perf_summary.py" >"$perfdir/summary.txt" || true
  if [ -f "$perfdir/perf_stream.data" ]; then
    perf script -i "$perfdir/perf_stream.data" --no-inline -F comm,tid,ip,sym,dso 2>/dev/null \
      | python3 "$root/bench/server/perf_summary.py" >"$perfdir/summary_stream.txt" || true
  fi
  say "perf: $perfdir/{perf.data,top_symbols.txt,summary.txt,summary_stream.txt}"
fi

# ---- LangGraph.js ----
pversion=""
if [ "$nopeer" = 0 ]; then
  command -v node >/dev/null && command -v npm >/dev/null || { say "node/npm missing (use --no-peer)"; exit 1; }
  peer=$root/bench/peers/langgraphjs-server
  mkdir -p "$peer"
  for f in package.json package-lock.json graphs.ts langgraph.json tsconfig.json; do
    cmp -s "$peer_src/$f" "$peer/$f" || cp "$peer_src/$f" "$peer/$f"
  done
  chmod u+w "$peer"/*
  if [ ! -d "$peer/node_modules/@langchain/langgraph-api" ]; then
    say "installing the pinned LangGraph.js server packages into bench/peers/langgraphjs-server"
    (cd "$peer" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
  fi
  pport=$(free_port 2124)
  rm -rf "$peer/.langgraph_api"
  (cd "$peer" && LANGGRAPH_CLI_NO_ANALYTICS=1 LANGSMITH_TRACING=false LANGSMITH_TRACING_V2=false \
    LANGCHAIN_TRACING=false LANGCHAIN_TRACING_V2=false BROWSER=none \
    exec setsid node node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs dev \
    --no-browser --no-reload --host 127.0.0.1 --port "$pport" --config langgraph.json \
    >"$work/peer.log" 2>&1) &
  CLI=$!
  purl=http://127.0.0.1:$pport
  wait_ok "$purl" 90 || { say "LangGraph.js's server did not come up:"; tail -20 "$work/peer.log" >&2; exit 1; }
  ppid_=$(ss -ltnpH "sport = :$pport" | grep -o 'pid=[0-9]*' | head -1 | cut -d= -f2)
  pversion=$(curl -s "$purl/info" | sed -n 's/.*"version":"\([^"]*\)".*/\1/p')
  bench langgraphjs "$purl" "$ppid_" "$psecs"
  kill "$CLI" 2>/dev/null || true
  for _ in $(seq 1 40); do kill -0 "$ppid_" 2>/dev/null || break; sleep 0.25; done
  kill "$ppid_" 2>/dev/null || true
  wait "$CLI" 2>/dev/null || true
  CLI=""
fi

[ -n "$jsonout" ] && cp "$raw" "$jsonout"
machine="$(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')), $(uname -sr), load $(cut -d' ' -f1-3 /proc/loadavg)"
if [ -n "$pversion" ]; then pnote="langgraph-api $pversion, phases $psecs s"; else pnote="skipped"; fi
node "$root/bench/server/table.mjs" "$raw" "$machine" "${sversion:-?}, phases $secs s" "$pnote"
