// The table of bench/server/server.sh: reads its JSON lines
// ({impl, phase, r}) and prints figure | superstep | LangGraph.js | ratio,
// then the issue-17 goals for superstep.
//   node bench/server/table.mjs RAW.jsonl MACHINE SUPERSTEP_NOTE PEER_NOTE
import fs from "node:fs";

const [raw, machine, snote, pnote] = process.argv.slice(2);
const rows = fs.readFileSync(raw, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const get = (impl, phase) => rows.filter((r) => r.impl === impl && r.phase === phase).map((r) => r.r);
const median = (xs) => {
  const s = xs.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};

function figures(impl) {
  const one = (p) => get(impl, p)[0];
  const a = one("a"), b = one("b"), b2 = one("b2"), start = one("start"), end = one("end");
  if (!a) return null;
  const c = get(impl, "c");
  const cm = (k) => median(c.map((x) => x[k]));
  return {
    "(a) 1 client: runs/s": a.runs_per_s,
    "(a) runs/wait p50 ms": a.wait.p50_ms,
    "(a) runs/wait p99 ms": a.wait.p99_ms,
    "(a) create+wait p50 ms": a.pair.p50_ms,
    "(a) server CPU ms per run": a.server_cpu_ms_per_run,
    "(b) 16 clients: runs/s": b.runs_per_s,
    "(b) runs/wait p50 ms": b.wait.p50_ms,
    "(b) runs/wait p99 ms": b.wait.p99_ms,
    "(b) runs/wait max ms": b.wait.max_ms,
    "(b) create+wait p99 ms": b.pair.p99_ms,
    "(b) server CPU ms per run": b.server_cpu_ms_per_run,
    "(b) server cores busy": b.server_cpu_ms / 1000 / b.secs,
    "(b2) 16 clients stateless runs/s": b2.runs_per_s,
    "(b2) stateless p99 ms": b2.wait.p99_ms,
    "(b2) server CPU ms per run": b2.server_cpu_ms_per_run,
    "(c) stream n=1000: total s": cm("total_s"),
    "(c) events/s, whole request": cm("events_per_s_total"),
    "(c) time to first event ms": cm("time_to_first_update_ms"),
    "(c) events/s, first to last": cm("events_per_s_first_to_last"),
    "(c) server CPU ms per stream": cm("server_cpu_ms"),
    "(d) VmHWM at start KiB": start.vmhwm_kib,
    "(d) VmHWM at end KiB": end.vmhwm_kib,
    "(d) VmRSS at end KiB": end.vmrss_kib,
    "load generator CPU ms per run (b)": b.client_cpu_ms_per_run,
    "errors, all phases": [a, b, b2, ...c].reduce((t, x) => t + x.errors, 0),
  };
}

// Higher is better for these; for the rest lower is better.
const higher = (k) => /runs\/s|events\/s/.test(k);
const neutral = (k) => /cores busy|errors|load generator/.test(k);
const fmt = (v) =>
  v == null || !Number.isFinite(v) ? "–" : Math.abs(v) >= 100 ? Math.round(v).toLocaleString("en-US") : +v.toPrecision(3) + "";

const s = figures("superstep");
const p = figures("langgraphjs");
console.log(`machine: ${machine}`);
console.log(`superstep ${snote}; LangGraph.js: ${pnote}`);
console.log("ratio: how many times better superstep is (throughput: s/p; latency, CPU, memory: p/s)\n");
const w = 38;
console.log(`${"figure".padEnd(w)} ${"superstep".padStart(12)} ${"LangGraph.js".padStart(13)} ${"ratio".padStart(9)}`);
for (const k of Object.keys(s)) {
  const sv = s[k], pv = p ? p[k] : undefined;
  let ratio = "";
  if (p && !neutral(k) && Number.isFinite(sv) && Number.isFinite(pv) && sv > 0 && pv > 0)
    ratio = fmt(higher(k) ? sv / pv : pv / sv) + "x";
  console.log(`${k.padEnd(w)} ${fmt(sv).padStart(12)} ${fmt(pv).padStart(13)} ${ratio.padStart(9)}`);
}

const goals = [
  ["server CPU per chain run <= 0.3 ms (b)", s["(b) server CPU ms per run"], (v) => v <= 0.3],
  [">= 2000 runs/s with 16 clients", s["(b) 16 clients: runs/s"], (v) => v >= 2000],
  ["p99 <= 20 ms with 16 clients (runs/wait)", s["(b) runs/wait p99 ms"], (v) => v <= 20],
  [">= 100000 stream events/s (first to last)", s["(c) events/s, first to last"], (v) => v >= 100000],
  ["server RSS <= 30 MB (VmHWM at end)", s["(d) VmHWM at end KiB"] / 1024, (v) => v <= 30],
];
console.log("\ngoals (issue 17), superstep:");
for (const [name, v, ok] of goals) console.log(`  ${ok(v) ? "met    " : "NOT met"}  ${name}: ${fmt(v)}`);
