// Summarizes bench/run.sh's raw records: one table, or JSON lines.
// usage: node summarize.mjs RAW.jsonl JSON(0|1) "machine description"
import fs from "node:fs";

const [rawPath, jsonFlag, machine] = process.argv.slice(2);
const records = fs.readFileSync(rawPath, "utf8").trim().split("\n").map((l) => JSON.parse(l));

// The figures of one record, whatever produced it.
function figures(r) {
  const x = r.raw ?? {};
  const f = { rss_kib: r.rss_kib };
  const unitOf = { W1: "superstep", W2: "task", W3: "superstep", W4: "run", W5: "invoke", W6: "superstep" };
  f.unit = unitOf[r.workload];
  if (r.impl.startsWith("langgraphjs")) {
    if (r.workload === "W1") Object.assign(f, { per_unit_us: x.warm_us_per_step, wall_ms: x.warm_wall_ms });
    if (r.workload === "W2") Object.assign(f, { per_unit_us: x.warm_us_per_task, wall_ms: x.warm_wall_ms });
    if (r.workload === "W3") Object.assign(f, { per_unit_us: x.us_per_step, wall_ms: x.wall_ms, storage_bytes: x.storage_bytes_end });
    if (r.workload === "W4") Object.assign(f, { per_unit_us: x.warm_us_per_run, wall_ms: x.warm_wall_ms, runs_per_s: x.warm_runs_per_s });
    if (r.workload === "W5") Object.assign(f, { per_unit_us: x.us_per_invoke_incl_sleeps, wall_ms: x.wall_ms, all_18: x.all_18,
      conflict: x.lastvalue_conflict?.raised ? `${x.lastvalue_conflict.name ?? x.lastvalue_conflict.class}` : "no error" });
    if (r.workload === "W6") Object.assign(f, { per_unit_us: x.us_per_step, wall_ms: x.wall_ms, storage_bytes: x.db_bytes,
      bytes_per_checkpoint: x.bytes_per_checkpoint, flat_bytes_per_checkpoint: x.flat?.bytes_per_checkpoint });
  } else if (r.impl.includes("-cli")) {
    // A whole process: start-up, script load, the run, exit.
    const steps = r.workload === "W3" ? 2 * r.size : r.size;
    Object.assign(f, { per_unit_us: r.process_us / steps, wall_ms: r.process_us / 1000, storage_bytes: r.db_bytes ?? undefined,
      note: "whole process" });
    if (x.status !== "completed") throw new Error(`${r.impl} ${r.workload}: status ${x.status}`);
  } else {
    Object.assign(f, { per_unit_us: x.per_unit_us, wall_ms: x.wall_ms, storage_bytes: x.storage_bytes, runs_per_s: x.runs_per_s });
    if (r.workload === "W5") Object.assign(f, { all_18: x.all_18, conflict: x.plain_conflict });
    if (r.workload === "W6") Object.assign(f, { bytes_per_checkpoint: x.storage_bytes / x.checkpoints,
      flat_bytes_per_checkpoint: x.flat_bytes_per_checkpoint });
  }
  // W6: the nested run against flat W1 on the same saver in the same process.
  if (r.workload === "W6") Object.assign(f, { nested_over_flat_time: x.nested_over_flat_time, nested_over_flat_cpu: x.nested_over_flat_cpu,
    nested_over_flat_bytes: x.nested_over_flat_bytes });
  return f;
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const n = s.length; return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2; };
const groups = new Map();
for (const r of records) {
  const key = `${r.workload}|${r.impl}|${r.size}`;
  if (!groups.has(key)) groups.set(key, { workload: r.workload, impl: r.impl, size: r.size, runs: [] });
  groups.get(key).runs.push(figures(r));
}
const rows = [...groups.values()].map((g) => {
  const pick = (k) => g.runs.map((f) => f[k]).filter((v) => typeof v === "number");
  const stat = (k) => { const xs = pick(k); return xs.length ? { median: median(xs), min: Math.min(...xs) } : null; };
  return { ...g, per_unit_us: stat("per_unit_us"), wall_ms: stat("wall_ms"), rss_kib: stat("rss_kib"),
    storage_bytes: stat("storage_bytes"), runs_per_s: stat("runs_per_s"), unit: g.runs[0].unit,
    nested_over_flat_time: stat("nested_over_flat_time"), nested_over_flat_cpu: stat("nested_over_flat_cpu"),
    nested_over_flat_bytes: stat("nested_over_flat_bytes"),
    bytes_per_checkpoint: stat("bytes_per_checkpoint"), flat_bytes_per_checkpoint: stat("flat_bytes_per_checkpoint"),
    all_18: g.runs.every((f) => f.all_18 !== false) && g.runs.some((f) => f.all_18 !== undefined) ? true : g.runs[0].all_18,
    conflict: g.runs[0].conflict, note: g.runs[0].note };
});

// The LangGraph.js row a superstep row is compared with (same workload and size).
function peerOf(row) {
  const peers = rows.filter((r) => r.workload === row.workload && r.impl.startsWith("langgraphjs") && r.size === row.size);
  const wantMemory = row.impl.includes("memory");
  return peers.find((p) => p.impl.includes("memory") === wantMemory) ?? peers[0];
}

if (jsonFlag === "1") {
  for (const r of rows) {
    for (const metric of ["per_unit_us", "wall_ms", "rss_kib", "storage_bytes", "runs_per_s", "bytes_per_checkpoint",
      "flat_bytes_per_checkpoint", "nested_over_flat_time", "nested_over_flat_cpu", "nested_over_flat_bytes"]) {
      if (!r[metric]) continue;
      const line = { workload: r.workload, impl: r.impl, size: r.size, metric, median: +r[metric].median.toFixed(4), min: +r[metric].min.toFixed(4), runs: r.runs.length };
      const p = peerOf(r);
      if (p && p !== r && p[metric] && metric !== "rss_kib" && r.workload !== "W5" && !metric.startsWith("nested_")) line.ratio_to_langgraphjs = +(r[metric].median / p[metric].median).toPrecision(4);
      if (metric === "rss_kib" && p && p !== r) line.ratio_to_langgraphjs = +(r.rss_kib.median / p.rss_kib.median).toPrecision(4);
      console.log(JSON.stringify(line));
    }
    if (r.workload === "W5") console.log(JSON.stringify({ workload: "W5", impl: r.impl, size: r.size, metric: "semantics", all_18: r.all_18, conflict: r.conflict }));
  }
  process.exit(0);
}

const fmt = (x, d = 2) => (x === null || x === undefined ? "-" : x >= 100 ? x.toFixed(0) : x.toFixed(d));
console.log(`superstep vs LangGraph.js, one run (${machine}); medians of ${Math.max(...rows.map((r) => r.runs.length))} fresh processes`);
console.log("");
const head = ["workload", "impl", "size", "wall ms med", "wall ms min", "µs per unit", "peak RSS MiB", "storage bytes", "superstep/LG.js", "× faster"];
const table = [head];
for (const r of rows) {
  const p = peerOf(r);
  const isPeer = r.impl.startsWith("langgraphjs");
  // W5's LangGraph.js figure includes the random sleeps of its nodes: not a speed figure.
  const ratio = !isPeer && p && r.workload !== "W5" ? r.per_unit_us.median / p.per_unit_us.median : null;
  table.push([r.workload, r.impl + (r.note ? "*" : ""), String(r.size), fmt(r.wall_ms?.median), fmt(r.wall_ms?.min),
    `${fmt(r.per_unit_us?.median, 3)}/${r.unit}`, fmt(r.rss_kib.median / 1024, 1),
    r.storage_bytes ? String(Math.round(r.storage_bytes.median)) : "-",
    ratio === null ? "" : ratio.toPrecision(3), ratio === null ? "" : (1 / ratio).toFixed(0) + "×"]);
}
const widths = head.map((_, i) => Math.max(...table.map((row) => row[i].length)));
for (const row of table) console.log(row.map((c, i) => (i < 2 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join("  "));
console.log("\n* whole process (start-up, script load, run, exit), not just the run");
for (const r of rows.filter((x) => x.workload === "W5")) {
  console.log(`W5 ${r.impl}: sum of 10 + 4 + 4 = 18 in every run: ${r.all_18}; two writes to a single-writer field: ${r.conflict}`);
}
for (const r of rows.filter((x) => x.workload === "W6" && x.nested_over_flat_time)) {
  console.log(`W6 ${r.impl} (${r.size} innermost supersteps, 3 levels): nested/flat W1 on the same saver: time ${fmt(r.nested_over_flat_time.median)}× (CPU ${fmt(r.nested_over_flat_cpu?.median)}×), ` +
    `bytes ${fmt(r.nested_over_flat_bytes.median)}×; bytes per checkpoint ${fmt(r.bytes_per_checkpoint?.median, 0)} nested, ${fmt(r.flat_bytes_per_checkpoint?.median, 0)} flat`);
}
for (const r of rows.filter((x) => x.workload === "W4" && x.runs_per_s)) {
  console.log(`W4 ${r.impl} (${r.size} threads): ${fmt(r.runs_per_s.median, 0)} runs/s`);
}
