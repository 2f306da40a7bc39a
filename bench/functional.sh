#!/usr/bin/env bash
# The functional API benchmark (issue 21), in one run: W1 and W2 as
# superstep entrypoints with tasks and as superstep graphs (bench_functional,
# one process, interleaved), and as LangGraph.js functional workflows
# (entrypoint/task: w1_functional.mjs, w2_functional.mjs) and graphs
# (w1_loop.mjs, w2_fanout.mjs), alternating, each with no checkpointer and
# with a memory saver. Prints one table: µs per unit, functional/graph on
# each side, and how many times faster superstep's functional API is than
# LangGraph.js's. Goals: functional within 2x of graph; >= 100x LangGraph.js.
#
#   bash bench/functional.sh [--quick] [--reps N] [--build DIR] [--raw]
#
# --reps: repetitions (default 3; each one LangGraph.js process per script
# and saver, and one bench_functional process of 31 interleaved runs per
# mode); --quick: 1 repetition of 5 runs. --build: the build directory
# (default build/bench-func, Release). --raw: print the JSON lines too.
# Figures: the median over repetitions of each repetition's figure
# (LangGraph.js: its warm run; superstep: the median of its runs).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
reps=3 cruns=31 build=$root/build/bench-func raw=0
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) reps=1; cruns=5 ;;
    --reps) reps=$2; shift ;;
    --build) build=$2; shift ;;
    --raw) raw=1 ;;
    *) echo "usage: bench/functional.sh [--quick] [--reps N] [--build DIR] [--raw]" >&2; exit 2 ;;
  esac
  shift
done
say() { echo "functional: $*" >&2; }

node_major=$(node -e 'console.log(process.versions.node.split(".")[0])')
if [ "$node_major" -lt 20 ]; then
  say "the pinned LangGraph.js packages need node >= 20 (found $(node --version))"
  exit 1
fi

say "building bench_functional (Release) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DSST_BUILD_TESTS=OFF >/dev/null
cmake --build "$build" -j --target bench_functional >/dev/null
bin=$build/bench/bench_functional

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

# js TAG SCRIPT ARGS...: one fresh node process; its JSON line, tagged.
js() {
  local tag=$1; shift
  local line
  line=$(node --no-warnings "$peer/$1" "${@:2}" | tail -1)
  [ "${line:0:1}" = "{" ] || { say "$1 $*: no figure"; exit 1; }
  printf '{"impl":"langgraphjs","tag":"%s","rep":%d,"out":%s}\n' "$tag" "$rep" "$line" >>"$out"
}

for rep in $(seq 1 "$reps"); do
  say "repetition $rep of $reps"
  for saver in none memory; do
    js "W1 functional $saver" w1_functional.mjs --saver=$saver --n=1000
    js "W1 graph $saver" w1_loop.mjs --saver=$saver --n=1000
    js "W2 functional $saver" w2_functional.mjs --saver=$saver --k=1000
    js "W2 graph $saver" w2_fanout.mjs --saver=$saver --k=1000
  done
  "$bin" --json --reps "$cruns" --n 1000 --k 1000 |
    sed "s/^{/{\"rep\":$rep,/" >>"$out"
done

[ "$raw" = 1 ] && cat "$out" >&2
machine="$(nproc) cores, $(uname -sr), node $(node --version), $(gcc --version | head -1)"
node - "$out" "$machine" "$reps" "$cruns" <<'EOF'
const fs = require("fs");
const [file, machine, reps, cruns] = process.argv.slice(2);
const rows = fs.readFileSync(file, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b), n = s.length;
  return n === 0 ? NaN : n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
};
// superstep: µs per unit of (workload, api, saver, workers), median over repetitions
const sst = (w, api, saver, workers) => median(rows.filter((r) => r.impl === "superstep-c" &&
  r.workload === w && r.api === api && r.saver === saver && r.workers === workers)
  .map((r) => r.us_per_unit));
const cps = (w, api, saver) => (rows.find((r) => r.impl === "superstep-c" && r.workload === w &&
  r.api === api && r.saver === saver) || {}).checkpoints_per_run;
// LangGraph.js: warm µs per unit, median over repetitions
const lg = (tag) => median(rows.filter((r) => r.impl === "langgraphjs" && r.tag === tag)
  .map((r) => r.out.warm_us_per_task ?? r.out.warm_us_per_step));
const f = (x) => (!isFinite(x) ? "-" : x >= 100 ? x.toFixed(0) : x >= 10 ? x.toFixed(1) :
  x >= 1 ? x.toFixed(2) : x.toFixed(3));
const pad = (s, n) => String(s).padStart(n);

console.log(`functional API vs graph, superstep vs LangGraph.js, one run (${machine}); ` +
  `median of ${reps} repetition(s): LangGraph.js warm runs of fresh processes, superstep ` +
  `medians of ${cruns} interleaved runs per mode; µs per unit (W1 graph: a superstep; ` +
  `otherwise a task)\n`);
const head = ["workload", "saver", "workers", "sst graph", "sst func", "func/graph",
  "LG.js graph", "LG.js func", "LG func/graph", "sst func vs LG.js func", "ckpts sst g|f"];
const widths = [8, 6, 7, 10, 9, 10, 11, 10, 13, 22, 13];
const line = (cells) => cells.map((c, i) => (i < 2 ? String(c).padEnd(widths[i]) :
  pad(c, widths[i]))).join("  ");
console.log(line(head));
let worstRatio = 0, leastSpeedup = Infinity;
for (const w of ["W1", "W2"]) {
  for (const saver of ["none", "memory"]) {
    for (const workers of w === "W1" ? [1] : [1, 2]) {
      const g = sst(w, "graph", saver, workers), fn = sst(w, "functional", saver, workers);
      const lgg = lg(`${w} graph ${saver}`), lgf = lg(`${w} functional ${saver}`);
      const ratio = fn / g, speedup = lgf / fn;
      if (isFinite(ratio)) worstRatio = Math.max(worstRatio, ratio);
      if (isFinite(speedup)) leastSpeedup = Math.min(leastSpeedup, speedup);
      console.log(line([w, saver, workers, f(g), f(fn), f(ratio) + "x", f(lgg), f(lgf),
        f(lgf / lgg) + "x", f(speedup) + "x", saver === "none" ? "-" :
          `${cps(w, "graph", saver) ?? "-"}|${cps(w, "functional", saver) ?? "-"}`]));
    }
  }
}
console.log(`\nworst superstep functional/graph: ${f(worstRatio)}x (goal <= 2x: ` +
  `${worstRatio <= 2 ? "met" : "NOT met"})`);
console.log(`least superstep functional speedup over LangGraph.js functional: ` +
  `${f(leastSpeedup)}x (goal >= 100x: ${leastSpeedup >= 100 ? "met" : "NOT met"})`);
console.log("LangGraph.js runs on one thread: its figures stand beside both worker counts.");
EOF
