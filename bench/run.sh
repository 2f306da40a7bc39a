#!/usr/bin/env bash
# Side by side, in one run: the reference workloads W1-W6 on superstep (C API,
# Lua scripts, the superstep tool) and on LangGraph.js, alternating
# implementations, several repetitions each, every run a fresh process under
# /usr/bin/time (peak RSS). Prints one table (or JSON lines with --json).
#
#   bash bench/run.sh [--quick] [--json] [--reps N] [--only W1,W6] [--build DIR]
#
# --quick: one repetition, reduced LangGraph.js sizes, no scaling runs (under
# a minute once npm has installed the pinned packages). --only: just these
# workloads. --build: the build directory (default build-rel). Needs root for
# apt-get on a fresh machine; the LangGraph.js packages go to bench/peers/
# (git-ignored), installed once from the npm registry.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=0 json=0 reps=5 only=W1,W2,W3,W4,W5,W6 build=$root/build-rel
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; reps=1 ;;
    --json) json=1 ;;
    --reps) reps=$2; shift ;;
    --only) only=$2; shift ;;
    --build) build=$2; shift ;;
    *) echo "usage: bench/run.sh [--quick] [--json] [--reps N] [--only W1,W6] [--build DIR]" >&2
       exit 2 ;;
  esac
  shift
done
say() { echo "bench: $*" >&2; }
want() { [[ ",$only," == *",$1,"* ]]; }

need=()
command -v cmake >/dev/null || need+=(build-essential cmake pkg-config)
[ -f /usr/include/sqlite3.h ] || need+=(libsqlite3-dev)
[ -f /usr/include/lua5.4/lua.h ] || need+=(liblua5.4-dev)
[ -x /usr/bin/time ] || need+=(time)
[ -f /usr/include/microhttpd.h ] || need+=(libmicrohttpd-dev)
pkg-config --exists libcurl 2>/dev/null || need+=(libcurl4-openssl-dev)
command -v node >/dev/null || need+=(nodejs)
command -v npm >/dev/null || need+=(npm)
# better-sqlite3 (LangGraph.js's SqliteSaver) compiles from source.
command -v g++ >/dev/null || need+=(g++)
command -v make >/dev/null || need+=(make)
command -v python3 >/dev/null || need+=(python3)
if [ ${#need[@]} -gt 0 ]; then
  say "installing ${need[*]}"
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

node_major=$(node -e 'console.log(process.versions.node.split(".")[0])')
if [ "$node_major" -lt 20 ]; then
  say "the pinned LangGraph.js packages need node >= 20 (found $(node --version));"
  say "install node 20 (Debian 12's nodejs is 18), then run this again"
  exit 1
fi

say "building superstep (Release)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSST_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j >/dev/null
side=$build/bench/bench_side
cli=$build/superstep

peer=$root/bench/peers/langgraphjs
mkdir -p "$peer"
cp "$root"/bench/langgraphjs/*.mjs "$root"/bench/langgraphjs/package.json "$peer"/
if [ ! -d "$peer/node_modules/@langchain/langgraph" ]; then
  say "installing the pinned LangGraph.js packages into bench/peers/langgraphjs"
  (cd "$peer" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
raw=$work/raw.jsonl

# run IMPL WORKLOAD SIZE CMD...: one fresh process; its last stdout line (JSON)
# is kept with the peak RSS that /usr/bin/time measured, the process's wall
# time, and (with DBFILE set) the database's size after a WAL checkpoint.
run() {
  local impl=$1 w=$2 size=$3; shift 3
  local t0 t1 line rss
  t0=$(date +%s%N)
  if ! /usr/bin/time -f '%M' -o "$work/rss" "$@" >"$work/out" 2>"$work/err"; then
    say "$impl $w failed: $(tail -3 "$work/err")"
    exit 1
  fi
  t1=$(date +%s%N)
  line=$(tail -1 "$work/out")
  rss=$(tail -1 "$work/rss")
  [ "${line:0:1}" = "{" ] || line='null'
  local bytes=null
  if [ -n "${DBFILE:-}" ]; then bytes=$("$side" dbbytes "$DBFILE"); fi
  printf '{"impl":"%s","workload":"%s","size":%s,"rss_kib":%s,"process_us":%s,"db_bytes":%s,"raw":%s}\n' \
    "$impl" "$w" "$size" "$rss" "$(( (t1 - t0) / 1000 ))" "$bytes" "$line" >>"$raw"
}

if [ "$quick" = 1 ]; then
  n1=1000 k2=1000 it3=100 t4=500 r5=50 n6=200
else
  n1=1000 k2=1000 it3=500 t4=2000 r5=500 n6=1000
fi
w3marks="$((it3 / 5)),$((it3 / 2)),$it3"

for rep in $(seq 1 "$reps"); do
  say "repetition $rep of $reps"
  if want W1; then # a loop of n1 supersteps
    run langgraphjs W1 $n1 node "$peer/w1_loop.mjs" --saver=none --n=$n1
    run superstep-c W1 $n1 "$side" W1 c $n1
    run superstep-lua W1 $n1 "$side" W1 lua $n1
    run superstep-cli W1 $n1 "$cli" run "$root/examples/lua/w1_loop.lua" --db :memory: \
      --input "{\"counter\":0,\"n\":$n1}" --json
    run langgraphjs-memory W1 $n1 node "$peer/w1_loop.mjs" --saver=memory --n=$n1
    run superstep-c-memory W1 $n1 "$side" W1 c-memory $n1
  fi
  if want W2; then # k2 Send tasks
    items=$(seq -s, 0 $((k2 - 1)))
    run langgraphjs W2 $k2 node "$peer/w2_fanout.mjs" --saver=none --k=$k2
    run superstep-c W2 $k2 "$side" W2 c $k2
    run superstep-lua W2 $k2 "$side" W2 lua $k2
    run superstep-cli W2 $k2 "$cli" run "$root/examples/lua/w2_fanout.lua" --db :memory: \
      --input "{\"items\":[$items]}" --json
  fi
  if want W3; then # the chat loop on SQLite
    run langgraphjs-sqlite W3 $it3 node "$peer/w3_chat.mjs" --saver=sqlite --iters=$w3marks
    run superstep-c-sqlite W3 $it3 "$side" W3 c-sqlite $it3 "$work"
    rm -f "$work"/w3cli.db*
    DBFILE=$work/w3cli.db run superstep-cli-sqlite W3 $it3 "$cli" run \
      "$root/examples/lua/w3_chat.lua" --db "$work/w3cli.db" --input "{\"turns\":$it3}" --json
  fi
  if want W4; then # t4 threads, a 3-node chain each
    run langgraphjs-memory W4 $t4 node "$peer/w4_threads.mjs" --threads=$t4 --conc=1
    run superstep-c-memory W4 $t4 "$side" W4 c-memory $t4 "$work"
    run superstep-c-sqlite W4 $t4 "$side" W4 c-sqlite $t4 "$work"
  fi
  if want W5; then # parallel writes
    run langgraphjs W5 $r5 node "$peer/w5_determinism.mjs" --reps=$r5
    run superstep-c W5 $r5 "$side" W5 c $r5
  fi
  if want W6; then # W1's loop three subgraphs deep on SQLite, and flat W1 on SQLite beside it
    run langgraphjs-sqlite W6 $n6 node "$peer/w6_nested.mjs" --n=$n6
    run superstep-c-sqlite W6 $n6 "$side" W6 c-sqlite $n6 "$work"
  fi
done

if [ "$quick" = 0 ]; then
  say "scaling runs (superstep only, 10x to 1000x the sizes)"
  if want W1; then for n in 10000 100000 1000000; do run superstep-c W1 $n "$side" W1 c $n; done; fi
  if want W2; then for k in 10000 100000; do run superstep-c W2 $k "$side" W2 c $k; done; fi
  if want W3; then
    for it in 5000 10000; do run superstep-c-sqlite W3 $it "$side" W3 c-sqlite $it "$work"; done
  fi
  if want W4; then
    for t in 20000 100000; do run superstep-c-memory W4 $t "$side" W4 c-memory $t "$work"; done
    run superstep-c-sqlite W4 20000 "$side" W4 c-sqlite 20000 "$work"
  fi
  if want W6; then
    for n in 10000 20000; do run superstep-c-sqlite W6 $n "$side" W6 c-sqlite $n "$work"; done
  fi
fi

machine="$(nproc) cores, $(uname -sr), node $(node --version), $(gcc --version | head -1)"
node "$root/bench/summarize.mjs" "$raw" "$json" "$machine"
