// bench/durable/run.sh's records (JSON lines) as one Markdown table, then issue
// 37's goals as ratios within the run, one PASS/MISS line each per tree.
//   node table.mjs RAW.jsonl [MACHINE]
import fs from "node:fs";

const [file, machine = ""] = process.argv.slice(2);
const recs = fs.readFileSync(file, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));

const fmt = (x, d = 0) => (x === null || x === undefined || Number.isNaN(x) ? "–" : Number(x).toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d }));
const per = (x, n) => (x === null || x === undefined || !n ? null : x / n);

// One row's figures, whatever the record's kind.
function figures(r) {
  const x = r.r || {};
  let total = null, rps = null, p50 = null, p99 = null, cpu = null;
  switch (r.what) {
    case "pgbench":
      total = r.runs; rps = r.runs_per_s; p50 = r.lat_avg_ms; break;
    case "dbos":
    case "capi":
      total = x.total_runs; rps = x.runs_per_s; p50 = x.p50_ms; p99 = x.p99_ms; cpu = x.cpu_ms_per_run; break;
    case "serve":
    case "queue":
      total = (x.runs || 0) + (r.warmup_runs || 0); rps = x.runs_per_s;
      p50 = x.wait?.p50_ms; p99 = x.wait?.p99_ms; cpu = x.server_cpu_ms_per_run; break;
    case "stream":
      total = (x.n || 0) + (r.warmup_runs || 0) * 3; rps = x.events_per_s_total; // per step: 1 step ~ 1 event
      cpu = per(x.server_cpu_ms, x.n); break;
  }
  const pg = r.pg || null;
  const flushes = pg ? per(pg.flushes, total) : per(r.sst_flushes, total);
  return { total, rps, p50, p99, cpu, pgcpu: pg ? per(pg.cpu_ms, total) : null, commits: pg ? per(pg.xids, total) : null, flushes };
}

function label(r) {
  const who = r.what === "pgbench" ? "PostgreSQL" : r.what === "dbos" ? "DBOS 5.3" : `${r.tree} ${r.commit}`;
  let what;
  switch (r.what) {
    case "pgbench": what = `pgbench single-row INSERT, ${r.clients} client${r.clients > 1 ? "s" : ""} (p50 column: average)`; break;
    case "dbos": what = `D1 3-step workflow in-process, ${r.conc} in flight`; break;
    case "capi": what = `C API chain, ${r.threads} thread${r.threads > 1 ? "s" : ""}, ${r.db}`; break;
    case "serve": what = `serve --workers ${r.workers}, ${r.clients} HTTP clients, ${r.db}`; break;
    case "queue": what = `serve --workers 0 + ${r.worker_processes} worker process${r.worker_processes > 1 ? "es" : ""}, ${r.clients} clients, ${r.db}`; break;
    case "stream": what = `stream, ${r.steps} steps, ${r.db} (rep ${r.rep}; runs/s column: events/s)`; break;
  }
  return { who, what, mode: r.mode || (r.what === "dbos" || r.what === "pgbench" ? "sync" : "") };
}

let out = `Issue 37, bench/durable/run.sh${machine ? `: ${machine}` : ""}\n\n`;
out += "| who | what | mode | runs/s | p50 ms | p99 ms | CPU ms/run (superstep or node) | PostgreSQL CPU ms/run | commits/run | flushes/run | load |\n";
out += "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|\n";
for (const r of recs) {
  const l = label(r);
  if (r.failed !== undefined) {
    out += `| ${l.who} | ${l.what} | ${l.mode} | not supported or failed: ${String(r.failed).replace(/\s+/g, " ").replace(/\|/g, "/").slice(0, 120)} | | | | | | | ${r.loadavg1} |\n`;
    continue;
  }
  const f = figures(r);
  out += `| ${l.who} | ${l.what} | ${l.mode} | ${fmt(f.rps, f.rps < 100 ? 1 : 0)} | ${fmt(f.p50, 2)} | ${fmt(f.p99, 2)} | ${fmt(f.cpu, 3)} | ${fmt(f.pgcpu, 3)} | ${fmt(f.commits, 2)} | ${fmt(f.flushes, f.flushes !== null && f.flushes < 0.1 ? 4 : 2)} | ${r.loadavg1} |\n`;
}

// ---- goals ----
const median = (xs) => { const s = xs.filter((v) => v !== null && v !== undefined).sort((a, b) => a - b); return s.length ? (s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2) : null; };
const find = (pred) => recs.find((r) => r.failed === undefined && pred(r));
const rps = (r) => (r ? figures(r).rps : null);
const pg1 = find((r) => r.what === "pgbench" && r.clients === 1);
const dbos1 = find((r) => r.what === "dbos" && r.conc === 1);
const dbos16 = find((r) => r.what === "dbos" && r.conc === 16);
const trees = [...new Set(recs.filter((r) => r.tree).map((r) => `${r.tree}\u0000${r.commit}`))];
const lines = [];
const goal = (tree, text, value, target, cmp = ">=") => {
  if (value === null || value === undefined || target === null || target === undefined) {
    lines.push(`- ${tree}: n/a  ${text}: not measured in this run`);
    return;
  }
  const pass = cmp === ">=" ? value >= target : value <= target;
  lines.push(`- ${tree}: ${pass ? "PASS" : "MISS"}  ${text}: ${fmt(value, value < 10 ? 2 : 0)} (goal ${cmp} ${fmt(target, target < 10 ? 2 : 0)})`);
};
for (const key of trees) {
  const [tree, commit] = key.split("\u0000");
  const mine = (pred) => find((r) => r.tree === tree && r.commit === commit && pred(r));
  const t = `${tree} ${commit}`;
  const capi16 = mine((r) => r.what === "capi" && r.db === "postgres" && r.threads === 16 && r.mode === "sync");
  goal(t, "PostgreSQL, 16 in flight, sync: C API runs/s / DBOS workflows/s at 16 in flight", rps(capi16) && rps(dbos16) ? rps(capi16) / rps(dbos16) : null, 10);
  const serves = ["2", "8"].map((w) => mine((r) => r.what === "serve" && r.db === "postgres" && String(r.workers) === w && r.mode === "sync"));
  for (const s of serves) if (s) goal(t, `PostgreSQL, 16 clients, sync: serve --workers ${s.workers} runs/s / DBOS at 16 in flight`, rps(dbos16) ? rps(s) / rps(dbos16) : null, 5);
  const capi1 = mine((r) => r.what === "capi" && r.db === "postgres" && r.threads === 1 && r.mode === "sync");
  const c1 = capi1 ? figures(capi1) : null;
  goal(t, "PostgreSQL, 1 in flight, sync: C API commits/s (transactions per run x runs/s) / pgbench 1 client", c1 && c1.commits !== null && rps(pg1) ? (c1.commits * c1.rps) / rps(pg1) : null, 0.8);
  const capi1a = mine((r) => r.what === "capi" && r.db === "postgres" && r.threads === 1 && r.mode === "async");
  goal(t, "PostgreSQL, 1 in flight, async: C API runs/s / DBOS sequential", rps(capi1a) && rps(dbos1) ? rps(capi1a) / rps(dbos1) : null, 5);
  for (const w of [2, 8]) {
    const s = mine((r) => r.what === "serve" && r.db === "sqlite" && r.workers === w && r.mode === "sync");
    const f = s ? figures(s) : {};
    goal(t, `SQLite serve --workers ${w}, 16 clients, sync: runs/s`, f.rps ?? null, 4000);
    goal(t, `SQLite serve --workers ${w}, 16 clients, sync: server CPU ms per run`, f.cpu ?? null, 0.3, "<=");
    goal(t, `SQLite serve --workers ${w}, 16 clients, sync: p99 ms`, f.p99 ?? null, 20, "<=");
  }
  for (const [m, target] of [["sync", 20000], ["async", 100000]]) {
    const xs = recs.filter((r) => r.tree === tree && r.commit === commit && r.what === "stream" && r.mode === m && r.failed === undefined).map((r) => figures(r).rps);
    goal(t, `SQLite 1 000-step stream, ${m}: events/s (median of ${xs.length})`, median(xs), target);
  }
  for (const m of ["sync", "async", "exit"]) {
    const q1 = mine((r) => r.what === "queue" && r.worker_processes === 1 && r.mode === m);
    const q4 = mine((r) => r.what === "queue" && r.worker_processes === 4 && r.mode === m);
    goal(t, `PostgreSQL, ${m}: 4 worker processes / 1 worker process, runs/s`, rps(q1) && rps(q4) ? rps(q4) / rps(q1) : null, 1);
  }
  for (const db of ["postgres", "sqlite"]) {
    const s2 = mine((r) => r.what === "serve" && r.db === db && r.workers === 2 && r.mode === "sync");
    const s8 = mine((r) => r.what === "serve" && r.db === db && r.workers === 8 && r.mode === "sync");
    goal(t, `${db}, sync: serve --workers 8 / --workers 2, runs/s (more threads never slower)`, rps(s2) && rps(s8) ? rps(s8) / rps(s2) : null, 1);
  }
  lines.push(`- ${t}: n/a  W1–W6 in-process figures no worse than before: measured by bench/run.sh, not by this script`);
}
out += "\nGoals (issue 37), ratios within this run:\n\n" + lines.join("\n") + "\n";
process.stdout.write(out);
