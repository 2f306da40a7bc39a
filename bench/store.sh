#!/usr/bin/env bash
# The long-term store side by side with LangGraph.js's InMemoryStore (issue 16),
# in one run, implementations alternating: N puts of items with DIMS-dim
# embeddings from a deterministic embedder (no network), then searches by a
# query, with and without a filter matching a tenth of the items. Prints the
# figures and the ratios.
#
#   bash bench/store.sh [--n N] [--dims D] [--reps R] [--build DIR]
#
# Defaults: 100 000 items of 1 536 dims, 1 repetition. LangGraph.js is given
# 20 searches (each scans every item in JavaScript: about a second apiece at
# 100 000), superstep 200. Needs bench/run.sh's LangGraph.js packages: they are
# installed into bench/peers/langgraphjs on first use, as run.sh does.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
n=100000 dims=1536 reps=1 build=$root/build-rel
while [ $# -gt 0 ]; do
  case "$1" in
    --n) n=$2; shift ;;
    --dims) dims=$2; shift ;;
    --reps) reps=$2; shift ;;
    --build) build=$2; shift ;;
    *) echo "usage: bench/store.sh [--n N] [--dims D] [--reps R] [--build DIR]" >&2; exit 2 ;;
  esac
  shift
done
say() { echo "bench: $*" >&2; }

say "building superstep (Release)"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSST_BUILD_BENCH=ON >/dev/null
cmake --build "$build" -j --target bench_store >/dev/null
peer=$root/bench/peers/langgraphjs
mkdir -p "$peer"
cp "$root"/bench/langgraphjs/*.mjs "$root"/bench/langgraphjs/package.json "$peer"/
if [ ! -d "$peer/node_modules/@langchain/langgraph" ]; then
  say "installing the pinned LangGraph.js packages into bench/peers/langgraphjs"
  (cd "$peer" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

out=$(mktemp)
trap 'rm -f "$out"' EXIT
for rep in $(seq 1 "$reps"); do
  say "repetition $rep of $reps: superstep"
  "$build/bench/bench_store" --items "$n" --dims "$dims" --queries 200 --backend memory --json |
    tail -1 >>"$out"
  say "repetition $rep of $reps: LangGraph.js"
  (cd "$peer" && node store.mjs --n="$n" --dims="$dims" --searches=20) | tail -1 >>"$out"
done

python3 - "$out" <<'EOF'
import json, statistics, sys
sst, lg = [], []
for line in open(sys.argv[1]):
    d = json.loads(line)
    (lg if d.get("workload") == "STORE" else sst).append(d)
def med(rows, f):
    return statistics.median(f(r) for r in rows)
m = lambda f: med(sst, lambda r: f(r["backends"][0]))
rows = [
    ("puts/s", m(lambda b: b["puts_per_s"]), med(lg, lambda r: r["puts_per_s"]), True),
    ("search p50 ms", m(lambda b: b["query_p50_ms"]), med(lg, lambda r: r["search_p50_ms"]), False),
    ("search p99 ms", m(lambda b: b["query_p99_ms"]), med(lg, lambda r: r["search_p99_ms"]), False),
    ("filtered p50 ms", m(lambda b: b["filtered_p50_ms"]), med(lg, lambda r: r["filtered_search_p50_ms"]), False),
    ("filtered p99 ms", m(lambda b: b["filtered_p99_ms"]), med(lg, lambda r: r["filtered_search_p99_ms"]), False),
    ("bytes/item", m(lambda b: b["bytes_per_item"]), med(lg, lambda r: r["heap_bytes_per_item"]), False),
]
print(f"store: {sst[0]['items']} items x {sst[0]['dims']} dims, medians of {len(sst)} run(s)")
print(f"{'':18}{'superstep':>14}{'LangGraph.js':>14}{'ratio':>10}")
for name, a, b, higher in rows:
    ratio = a / b if higher else b / a
    print(f"{name:18}{a:14.3f}{b:14.3f}{ratio:9.1f}x")
print("ratio: how many times better superstep is (InMemoryStore of @langchain/langgraph, "
      "bytes: its heap per item)")
EOF
