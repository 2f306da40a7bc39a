#!/usr/bin/env bash
# The Python binding beside LangGraph.js and the C API, in one run (issue 36):
# W1-W4 as Python graphs (bench/python/workloads.py, superstep.graph), as the
# LangGraph.js scripts (bench/langgraphjs) and as C graphs (bench_side),
# alternating, every run a fresh process. Prints one table, per workload:
# µs per unit for each side, the bare Python calls of a unit (the same node and
# router functions called directly), the engine's overhead beyond them
# (Python − bare: goal <= 5 µs per superstep and per task on W1/W2), the
# binding's share (Python − C − bare) and the speedup over LangGraph.js (goal
# >= 100x on W1/W2). W3 also compares the bytes of the SQLite file each leaves.
# Not a test (no assertions on speed): figures go to bench/RESULTS.md.
#
#   bash bench/python/run.sh [--quick] [--reps N] [--only W1,W2] [--build DIR] [--raw]
#                            [--runs N] [--against DIR]
#
# --reps: repetitions (default 3; figures are medians over them); --quick: one
# repetition, W3 at 100 iterations and W4 at 500 threads. --build: a build
# directory (default build/bench-py, Release; an existing one is reused with its
# build type); --raw: print the JSON lines too; --runs: warm runs per W1/W2 process
# (default 5; the table shows their median, "best" the fastest); --against: another
# build directory (with superstep_python built, e.g. of the commit before a change) whose
# Python rows run in the same repetitions, alternating first/second with this build's,
# tagged "old". Python is /usr/bin/python3
# (Debian's; the module is built for it). W1 and W2 run the Python graph with
# compile's default workers (4) and with workers=1 (no hand-off between threads).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
reps=3 build=$root/build/bench-py raw=0 only=W1,W2,W3,W4 quick=0 runs=5 against=
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1; reps=1 ;;
    --reps) reps=$2; shift ;;
    --only) only=$2; shift ;;
    --build) build=$2; shift ;;
    --raw) raw=1 ;;
    --runs) runs=$2; shift ;;
    --against) against=$(cd "$2" && pwd); shift ;;
    *) echo "usage: bench/python/run.sh [--quick] [--reps N] [--only W1,W2] [--build DIR] [--raw] [--runs N] [--against DIR]" >&2
       exit 2 ;;
  esac
  shift
done
say() { echo "bench/python: $*" >&2; }
want() { [[ ",$only," == *",$1,"* ]]; }
py=/usr/bin/python3

node_major=$(node -e 'console.log(process.versions.node.split(".")[0])')
if [ "$node_major" -lt 20 ]; then
  say "the pinned LangGraph.js packages need node >= 20 (found $(node --version))"
  exit 1
fi

if [ ! -f "$build/CMakeCache.txt" ]; then
  say "configuring $build (Release)"
  cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSST_BUILD_TESTS=OFF >/dev/null
fi
say "building the Python module and bench_side in $build"
cmake --build "$build" -j2 --target superstep_python bench_side >/dev/null
side=$build/bench/bench_side
export PYTHONDONTWRITEBYTECODE=1
if [ -n "$against" ] && [ ! -d "$against/python/superstep" ]; then
  say "--against $against: no Python module built there (cmake --build DIR --target superstep_python)"
  exit 1
fi

# The pinned LangGraph.js packages, as bench/run.sh installs them (git-ignored).
peer=$root/bench/peers/langgraphjs
mkdir -p "$peer"
cp "$root"/bench/langgraphjs/*.mjs "$root"/bench/langgraphjs/package.json "$peer"/
if [ ! -d "$peer/node_modules/@langchain/langgraph" ]; then
  say "installing the pinned LangGraph.js packages into bench/peers/langgraphjs"
  (cd "$peer" && npm install --no-audit --no-fund --loglevel=error >/dev/null)
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$work/raw.jsonl

# emit IMPL WORKLOAD CMD...: one fresh process; its last stdout line (JSON), tagged. Python
# runs take the module of $build, or of $against for the "-old" impls.
emit() {
  local impl=$1 w=$2 line pp=$build/python
  shift 2
  [[ "$impl" == *-old* ]] && pp=$against/python
  if ! line=$(PYTHONPATH=$pp "$@" 2>"$work/err" | tail -1) || [ "${line:0:1}" != "{" ]; then
    say "$impl $w failed: $(tail -3 "$work/err")"
    exit 1
  fi
  printf '{"impl":"%s","workload":"%s","rep":%d,"out":%s}\n' "$impl" "$w" "$rep" "$line" >>"$out"
}

n1=1000 k2=1000 it3=500 t4=2000
[ "$quick" = 1 ] && it3=100 t4=500
w3marks="$((it3 / 5)),$((it3 / 2)),$it3"

# pyside TAG W ARGS...: the Python rows of one workload, this build's and (with --against)
# the old build's, the old one first in even repetitions.
pyside() {
  local tag=$1 w=$2 order=new
  shift 2
  [ -n "$against" ] && [ $((rep % 2)) = 0 ] && order="old new"
  [ -n "$against" ] && [ $((rep % 2)) = 1 ] && order="new old"
  for o in $order; do
    local impl=$tag
    [ "$o" = old ] && impl=${tag/python/python-old}
    emit "$impl" "$w" "$py" "$root/bench/python/workloads.py" "$w" "$@"
    if [ "$w" = W3 ]; then
      # the Python run's file, measured as bench_side measures its own (after a WAL checkpoint)
      db=$(tail -1 "$out" | sed -n 's/.*"db": "\([^"]*\)".*/\1/p')
      [ "$o" = new ] && printf '{"impl":"python-bytes","workload":"W3","rep":%d,"out":{"db_bytes":%s}}\n' \
        "$rep" "$("$side" dbbytes "$db")" >>"$out"
      rm -f "$db" "$db-wal" "$db-shm"
    fi
  done
}

for rep in $(seq 1 "$reps"); do
  say "repetition $rep of $reps"
  if want W1; then
    emit langgraphjs W1 node --no-warnings "$peer/w1_loop.mjs" --saver=none --n=$n1
    pyside python W1 $n1 --runs=$runs
    pyside python-1w W1 $n1 --workers=1 --runs=$runs
    emit c W1 "$side" W1 c $n1
  fi
  if want W2; then
    emit langgraphjs W2 node --no-warnings "$peer/w2_fanout.mjs" --saver=none --k=$k2
    pyside python W2 $k2 --runs=$runs
    pyside python-1w W2 $k2 --workers=1 --runs=$runs
    emit c W2 "$side" W2 c $k2
  fi
  if want W3; then
    emit langgraphjs W3 node --no-warnings "$peer/w3_chat.mjs" --saver=sqlite --iters=$w3marks
    pyside python W3 $it3 "$work"
    emit c W3 "$side" W3 c-sqlite $it3 "$work"
  fi
  if want W4; then
    emit langgraphjs W4 node --no-warnings "$peer/w4_threads.mjs" --threads=$t4 --conc=1
    pyside python W4 $t4
    emit c W4 "$side" W4 c-memory $t4 "$work"
  fi
done

[ "$raw" = 1 ] && cat "$out" >&2
machine="$(nproc) cores, $(uname -sr), $("$py" --version), node $(node --version), $(gcc --version | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
node - "$out" "$machine" "$reps" "$n1" "$k2" "$it3" "$t4" <<'EOF'
const fs = require("fs");
const [file, machine, reps, n1, k2, it3, t4] = process.argv.slice(2);
const rows = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const median = (xs) => {
  const s = xs.filter((x) => typeof x === "number" && isFinite(x)).sort((a, b) => a - b);
  const n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
const pick = (impl, w, f) => median(rows.filter((r) => r.impl === impl && r.workload === w)
  .map((r) => f(r.out)));
// µs per unit: a superstep (W1, W3), a Send task (W2), a run of the 3-node chain (W4)
const lgUnit = {
  W1: (o) => o.warm_us_per_step, W2: (o) => o.warm_us_per_task,
  W3: (o) => o.us_per_step, W4: (o) => o.warm_us_per_run,
};
const f = (x) => (!isFinite(x) ? "-" : Math.abs(x) >= 100 ? x.toFixed(0) :
  Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2));
const units = { W1: `superstep (n=${n1})`, W2: `Send task (k=${k2})`,
  W3: `superstep (${it3} iterations, SQLite)`, W4: `run of 3 nodes (${t4} threads, memory)` };
console.log(`The Python binding beside LangGraph.js and the C API, one run (${machine}); ` +
  `medians of ${reps} repetition(s), each a fresh process per side; warm runs (W3: the ` +
  `whole chat); µs per unit\n`);
const head = ["workload", "Python", "best", "bare calls", "Py - bare", "best - bare", "C",
  "Py - C - bare", "LG.js", "LG.js / Py", "unit"];
const widths = [19, 8, 7, 10, 9, 11, 7, 13, 8, 10, 0];
const line = (cells) => cells.map((c, i) => (i === 0 ? String(c).padEnd(widths[i]) :
  i === cells.length - 1 ? String(c) : String(c).padStart(widths[i]))).join("  ");
console.log(line(head));
for (const w of ["W1", "W2", "W3", "W4"]) {
  const lg = pick("langgraphjs", w, lgUnit[w]);
  const c = pick("c", w, (o) => o.per_unit_us);
  for (const impl of ["python", "python-1w", "python-old", "python-old-1w"]) {
    const py = pick(impl, w, (o) => o.per_unit_us);
    if (!isFinite(py)) continue;
    const bare = pick(impl, w, (o) => o.bare_us);
    const best = pick(impl, w, (o) => o.best_us);
    const tag = w + (impl.includes("-1w") ? " 1 worker" : "") + (impl.includes("old") ? " old" : "");
    console.log(line([tag, f(py), f(best), f(bare), f(py - bare), f(best - bare), f(c),
      f(py - c - bare), f(lg), f(lg / py) + "x", units[w]]));
  }
}
const pyBytes = pick("python-bytes", "W3", (o) => o.db_bytes);
const cBytes = pick("c", "W3", (o) => o.storage_bytes);
const lgBytes = pick("langgraphjs", "W3", (o) => o.storage_bytes_end);
if (isFinite(pyBytes)) {
  console.log(`\nW3 SQLite bytes after ${it3} iterations: Python ${pyBytes}, C ${cBytes} ` +
    `(${pyBytes === cBytes ? "identical" : "differ by " + (pyBytes - cBytes)}), ` +
    `LangGraph.js ${lgBytes}`);
}
console.log("\nPython: superstep.graph nodes and routers (compile's default 4 workers, or 1), " +
  "W1/W2 the median (Python) and the fastest (best) of each process's warm runs; " +
  "old: the --against build, alternating with this one; " +
  "bare calls: the same functions called directly with a unit's states; C: bench_side's " +
  "graphs; goals: Py - bare <= 5 µs per superstep/task and LG.js / Py >= 100x on W1/W2.");
EOF
