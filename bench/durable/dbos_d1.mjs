// DBOS Transact's D1 (../shared/peers/dbos/d1_chain.mjs): a 3-step workflow
// (steps a, b, c: value +1, *2, -3, each appending its name to path), called
// in-process, CONC in flight, on a fresh database of the cluster at URL, for
// bench/durable/run.sh. Time-bound instead of count-bound: WARMUP workflows
// first (not measured), then as many as finish in SECS seconds. Every result
// is checked. Prints one JSON line: workflows/s, p50/p99 latency of one
// workflow, node's CPU per workflow, and the workflows made in all.
//   node dbos_d1.mjs --url=postgresql://postgres@127.0.0.1:PORT/postgres --conc=1|16 [--secs=8] [--warmup=200]
import { DBOS } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import os from "node:os";
import { performance } from "node:perf_hooks";

const arg = (name, dflt) => {
  const hit = process.argv.find((a) => a.startsWith(`--${name}=`));
  return hit === undefined ? dflt : hit.slice(name.length + 3);
};
const URL_ = arg("url", process.env.PG_URL || "");
const CONC = Number(arg("conc", "1"));
const SECS = Number(arg("secs", "8"));
const WARMUP = Number(arg("warmup", "200"));
const DB = `dbos_d1_c${CONC}`;
if (!URL_) throw new Error("--url=postgresql://... is required");
const base = new URL(URL_);
if (!["127.0.0.1", "localhost", "[::1]"].includes(base.hostname)) throw new Error(`refusing non-loopback host ${base.hostname}`);
const dbUrl = (name) => { const u = new URL(base); u.pathname = "/" + name; return u.toString(); };

const a = DBOS.registerStep(async (s) => ({ value: s.value + 1, path: [...s.path, "a"] }), { name: "a" });
const b = DBOS.registerStep(async (s) => ({ value: s.value * 2, path: [...s.path, "b"] }), { name: "b" });
const c = DBOS.registerStep(async (s) => ({ value: s.value - 3, path: [...s.path, "c"] }), { name: "c" });
const chain = DBOS.registerWorkflow(async (x) => {
  let s = { value: x, path: [] };
  s = await a(s);
  s = await b(s);
  s = await c(s);
  return s;
}, { name: "chain3" });

const admin = new pg.Client({ connectionString: dbUrl("postgres") });
await admin.connect();
await admin.query(`DROP DATABASE IF EXISTS ${DB} WITH (FORCE)`);
await admin.query(`CREATE DATABASE ${DB}`);
await admin.end();

DBOS.setConfig({ name: "sst-bench-durable-d1", systemDatabaseUrl: dbUrl(DB), logLevel: "warn" });
await DBOS.launch();

let made = 0;
const one = async (i) => {
  const out = await chain(i);
  made++;
  if (out.value !== (i + 1) * 2 - 3 || out.path.join("") !== "abc") throw new Error(`bad result for ${i}: ${JSON.stringify(out)}`);
};
for (let i = 0; i < WARMUP; i++) await one(i);

const lat = [];
let next = WARMUP;
const c0 = process.cpuUsage();
const t0 = performance.now();
const stopAt = t0 + SECS * 1000;
const worker = async () => {
  while (performance.now() < stopAt) {
    const s = performance.now();
    await one(next++);
    lat.push(performance.now() - s);
  }
};
await Promise.all(Array.from({ length: CONC }, worker));
const wall = performance.now() - t0;
const cpu = process.cpuUsage(c0);
await DBOS.shutdown();

lat.sort((x, y) => x - y);
const pct = (p) => (lat.length ? lat[Math.min(lat.length - 1, Math.floor((p / 100) * lat.length))] : 0);
const r3 = (x) => +x.toFixed(3);
process.stdout.write(JSON.stringify({
  impl: "dbos", dbos: "5.3.0", conc: CONC, runs: lat.length, total_runs: made, secs: r3(wall / 1000),
  runs_per_s: +(lat.length / (wall / 1000)).toFixed(1), p50_ms: r3(pct(50)), p99_ms: r3(pct(99)),
  cpu_ms_per_run: r3((cpu.user + cpu.system) / 1000 / Math.max(1, lat.length)),
  loadavg1: +os.loadavg()[0].toFixed(2),
}) + "\n");
