// Prints bench/postgres.sh's figures (its raw JSON lines) as one table.
//   node bench/postgres_table.mjs RAW.jsonl
import fs from "node:fs";

const rows = fs.readFileSync(process.argv[2], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
const fmt = (n, d = 0) => (n === undefined || n === null ? "-" : Number(n).toLocaleString("en-US", { maximumFractionDigits: d, minimumFractionDigits: d }).replace(/,/g, " "));
const mib = (b) => fmt(b / 1048576, 2) + " MiB";

const ins = rows.filter((r) => r.what === "pg_insert_commits");
const rate = (sc, c) => ins.find((r) => r.synchronous_commit === sc && (r.clients ?? 1) === c)?.per_s;
const insert = { on: rate("on", 1), off: rate("off", 1), on16: rate("on", 16) };
console.log("PostgreSQL 15 (fsync on), single-row INSERT commits:");
console.log(`  1 client: synchronous_commit=on ${fmt(insert.on)} /s, off ${fmt(insert.off)} /s;  16 clients, on: ${fmt(insert.on16)} /s\n`);

console.log("W3, the chat loop (one thread): time and bytes at the end");
console.log("  supersteps  implementation                     time        per superstep   storage");
for (const r of rows.filter((r) => r.workload === "W3" || r.workload === "W3_chat")) {
  const lg = r.workload === "W3_chat";
  const steps = lg ? r.supersteps : 2 * r.size;
  const name = lg ? "LangGraph.js PostgresSaver" : r.impl === "c-postgres" ? "superstep C, PostgreSQL" : "superstep C, SQLite";
  const ms = lg ? r.wall_ms : r.wall_ms;
  const bytes = lg ? r.storage_bytes_end : r.storage_bytes;
  console.log(`  ${String(steps).padStart(10)}  ${name.padEnd(32)} ${(fmt(ms / 1000, 2) + " s").padStart(10)}  ${(fmt(ms * 1000 / steps, 1) + " us").padStart(14)}  ${mib(bytes).padStart(12)}`);
}

console.log("\nW4, 2 000 threads x a 3-node chain, C API (warm pass):");
const w4rows = rows.find((r) => r.what === "w4_rows");
// Checkpoints (one commit each) per run, counted in the table after the runs.
const m = w4rows && /sst_checkpoints (\d+)/.exec(w4rows.rows);
const perRun = m ? Number(m[1]) / w4rows.runs : 5;
for (const r of rows.filter((r) => r.workload === "W4")) {
  const name = r.impl === "c-postgres" ? "PostgreSQL" : "SQLite";
  const commits = perRun * r.runs_per_s;
  const ratio = r.impl === "c-postgres" && insert.on ? ` = ${fmt(commits / insert.on, 2)} x PostgreSQL's own INSERT commit rate` : "";
  console.log(`  ${name.padEnd(11)} ${fmt(r.runs_per_s)} runs/s, ${fmt(commits)} checkpoint commits/s (${fmt(perRun, 1)} per run)${ratio}`);
}
if (w4rows) console.log(`  PostgreSQL rows after ${w4rows.runs} runs: ${w4rows.rows}; ${fmt(w4rows.bytes / w4rows.runs)} bytes per run`);

console.log("\nW4 through the queue (serve --workers 0 + N worker processes x 2 threads, 16 clients, runs/wait):");
console.log("  workers   runs/s   p50 ms   p99 ms   CPU ms/run (API+workers)   rows and bytes per run");
for (const r of rows.filter((r) => r.what === "queue")) {
  const l = r.load;
  console.log(`  ${String(r.workers).padStart(7)}  ${fmt(l.runs_per_s).padStart(7)}  ${fmt(l.wait.p50_ms, 1).padStart(7)}  ${fmt(l.wait.p99_ms, 1).padStart(7)}  ${fmt(l.server_cpu_ms_per_run, 2).padStart(25)}   ${fmt(r.bytes / r.runs)} B; ${r.rows}`);
}
