#!/usr/bin/env node
// Durability of `superstep serve`'s background runs (tests/server/README.md).
//
//   node crash.mjs --superstep /path/to/superstep [--keep] [--seed N]
//
// 1. kill -9: a server (crash.json: the recorder graph only, --workers 4) gets
//    20 threads with one background run each (recorder, n = 30); then 3 to 5
//    times, after a random 150-600 ms, it is killed with SIGKILL and started
//    again on the same database (and record file). All 20 runs must end in
//    success with the state of an uninterrupted run (count 30, log [1..30]),
//    every thread idle, and the record file (a line per execution of a step,
//    written by the node itself) must hold every step at least once and at
//    most kills x workers duplicate lines: only the steps in flight at a kill
//    may run twice, a committed step never does.
// 2. SIGTERM: a server with 4 running runs exits 0 within 10 s; started
//    again, the runs finish with the right state (no committed step re-run).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONFIG = path.join(HERE, "crash.json");
const N = 30;          // steps per run
const THREADS = 20;    // threads (one background run each) of the kill -9 part
const WORKERS = 4;
const RUN_TIMEOUT_MS = 120000;

function usage(msg) {
  if (msg) console.error(`crash.mjs: ${msg}`);
  console.error("usage: node crash.mjs --superstep PATH [--keep] [--seed N]");
  process.exit(2);
}

const opts = { keep: false, seed: Date.now() % 1000000 };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const name = a.split("=")[0];
  const val = () => {
    if (a.includes("=")) return a.slice(a.indexOf("=") + 1);
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    return argv[++i];
  };
  if (name === "--superstep") opts.superstep = path.resolve(val());
  else if (name === "--keep") opts.keep = true;
  else if (name === "--seed") opts.seed = Number(val());
  else if (name === "-h" || name === "--help") usage();
  else usage(`unknown argument ${a}`);
}
if (!opts.superstep) usage("give --superstep PATH");
if (!fs.existsSync(opts.superstep)) usage(`--superstep ${opts.superstep} does not exist`);
if (!fs.existsSync(path.join(HERE, "node_modules", "@langchain", "langgraph-sdk"))) {
  console.error("crash.mjs: the LangGraph JS SDK is missing: npm ci --prefix tests/server");
  process.exit(1);
}

// A small seeded PRNG (mulberry32): a failure can be replayed with --seed.
let rngState = opts.seed >>> 0;
function rand() {
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const randInt = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-crash-test-"));
let current = null;      // the server running now
let stderrLog = "";      // every incarnation's stderr, for failure messages

class Fail extends Error {}
function fail(msg) { throw new Fail(msg); }
function check(cond, msg) { if (!cond) fail(typeof msg === "function" ? msg() : msg); }

async function start(db, record, label) {
  const server = await startServer({
    superstep: opts.superstep,
    config: CONFIG,
    args: ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", String(WORKERS)],
    env: { SST_RECORD_FILE: record },
    timeoutMs: 30000,
  });
  server.label = label;
  server.exited.then(() => { stderrLog += `--- ${label} ---\n${server.stderr()}`; });
  current = server;
  const client = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
  return { server, client };
}

async function kill9(server) {
  server.proc.kill("SIGKILL");
  const res = await server.exited;
  check(res.signal === "SIGKILL", `${server.label}: expected death by SIGKILL, got ${JSON.stringify(res)}`);
  current = null;
}

// {"<thread> <k>": count} of the record file; bad lines are reported.
function readRecord(file) {
  const counts = new Map();
  const bad = [];
  const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
  for (const line of text.split("\n")) {
    if (!line) continue;
    const m = /^(\S+) (\d+)$/.exec(line);
    if (!m) { bad.push(line); continue; }
    counts.set(`${m[1]} ${m[2]}`, (counts.get(`${m[1]} ${m[2]}`) ?? 0) + 1);
  }
  return { counts, bad, lines: text.split("\n").filter(Boolean).length };
}

// Every (thread, k) once at least; returns {duplicates, perThread}.
function checkRecord(file, threadIds, label) {
  const { counts, bad, lines } = readRecord(file);
  check(bad.length === 0, `${label}: ${bad.length} malformed line(s) in the record file: ${JSON.stringify(bad.slice(0, 5))}`);
  const known = new Set(threadIds);
  for (const key of counts.keys()) {
    const [tid, k] = key.split(" ");
    check(known.has(tid), `${label}: the record file names an unknown thread ${tid} (ctx.config.configurable.thread_id wrong?)`);
    check(Number(k) >= 1 && Number(k) <= N, `${label}: the record file has step ${k} of ${tid}, outside 1..${N}`);
  }
  let duplicates = 0;
  const perThread = {};
  for (const tid of threadIds) {
    let d = 0;
    for (let k = 1; k <= N; k++) {
      const c = counts.get(`${tid} ${k}`) ?? 0;
      check(c >= 1, `${label}: step ${k} of thread ${tid} never ran (no "${tid} ${k}" line in the record file)`);
      d += c - 1;
    }
    if (d) perThread[tid] = d;
    duplicates += d;
  }
  return { duplicates, perThread, lines };
}

const expectedLog = Array.from({ length: N }, (_, i) => i + 1);

// Polls runs.get until every run is success; fails at once on a final non-success status.
async function waitAllSuccess(getClient, runs, label) {
  const end = Date.now() + RUN_TIMEOUT_MS;
  const status = new Map();
  for (;;) {
    const client = getClient();
    let pending = 0;
    for (const { thread_id, run_id } of runs) {
      if (status.get(run_id) === "success") continue;
      const r = await client.runs.get(thread_id, run_id);
      status.set(run_id, r.status);
      if (["error", "timeout", "interrupted"].includes(r.status)) {
        let detail = "";
        try { detail = JSON.stringify(await client.runs.join(thread_id, run_id)).slice(0, 500); } catch (e) { detail = e.message; }
        fail(`${label}: run ${run_id} of thread ${thread_id} ended with status ${r.status} (want success): ${detail}`);
      }
      if (r.status !== "success") pending++;
    }
    if (pending === 0) return;
    if (Date.now() > end) {
      const left = [...status].filter(([, s]) => s !== "success");
      fail(`${label}: ${left.length} run(s) not success after ${RUN_TIMEOUT_MS / 1000} s: ${JSON.stringify(left.slice(0, 5))}`);
    }
    await sleep(200);
  }
}

// State, thread status and the attempts seen in the checkpoints' metadata.
async function checkThreads(client, runs, label, maxAttempt) {
  const attempts = {};
  for (const { thread_id, run_id } of runs) {
    const st = await client.threads.getState(thread_id);
    check(st.values?.count === N, `${label}: thread ${thread_id}: count ${st.values?.count}, want ${N} (values ${JSON.stringify(st.values).slice(0, 300)})`);
    check(JSON.stringify(st.values?.log) === JSON.stringify(expectedLog),
      `${label}: thread ${thread_id}: log ${JSON.stringify(st.values?.log)}, want [1..${N}] (a step lost or applied twice)`);
    check(Array.isArray(st.next) && st.next.length === 0, `${label}: thread ${thread_id}: next ${JSON.stringify(st.next)}, want []`);
    const th = await client.threads.get(thread_id);
    check(th.status === "idle", `${label}: thread ${thread_id}: status ${th.status}, want idle`);
    // The run's attempt: LangGraph puts run_attempt (and run_id) into the
    // configurable and so into every checkpoint's metadata.
    const hist = await client.threads.getHistory(thread_id, { limit: 100 });
    let maxA = 0;
    for (const cp of hist) {
      const m = cp.metadata ?? {};
      if (m.source === "input") continue;
      check(m.run_id === undefined || m.run_id === run_id,
        `${label}: thread ${thread_id}: a checkpoint of run ${m.run_id}, want only run ${run_id}`);
      if (m.run_attempt !== undefined) {
        check(Number.isInteger(m.run_attempt) && m.run_attempt >= 1 && m.run_attempt <= maxAttempt,
          `${label}: thread ${thread_id}: checkpoint metadata run_attempt ${m.run_attempt}, want 1..${maxAttempt}`);
        maxA = Math.max(maxA, m.run_attempt);
      }
    }
    attempts[thread_id] = maxA;
  }
  return attempts;
}

async function killPart() {
  const db = path.join(tmp, "crash.db");
  const record = path.join(tmp, "record.txt");
  let { server, client } = await start(db, record, "server #1");
  const t0 = Date.now();
  const runs = [];
  for (let i = 0; i < THREADS; i++) {
    const th = await client.threads.create();
    const run = await client.runs.create(th.thread_id, "recorder", {
      input: { n: N }, config: { recursion_limit: 100 },
    });
    runs.push({ thread_id: th.thread_id, run_id: run.run_id });
  }
  const kills = randInt(3, 5);
  const killedAt = [];
  for (let i = 0; i < kills; i++) {
    await sleep(randInt(150, 600));
    const lines = readRecord(record).lines;
    killedAt.push(lines);
    await kill9(server);
    ({ server, client } = await start(db, record, `server #${i + 2}`));
  }
  console.log(`crash.mjs: kill -9: ${kills} kills (record lines at each: ${killedAt.join(", ")} of ${THREADS * N}); ` +
    `waiting for the ${THREADS} runs`);
  await waitAllSuccess(() => client, runs, "kill -9");
  const elapsed = Date.now() - t0;
  const attempts = await checkThreads(client, runs, "kill -9", kills + 1);
  const threadIds = runs.map((r) => r.thread_id);
  const { duplicates, perThread, lines } = checkRecord(record, threadIds, "kill -9");
  const maxDup = kills * WORKERS;
  const resumed = Object.values(attempts).filter((a) => a > 1).length;
  console.log(`crash.mjs: kill -9: all ${THREADS} runs success in ${elapsed} ms; ${lines} executions recorded for ` +
    `${THREADS * N} steps: ${duplicates} duplicate(s) (at most ${maxDup} = ${kills} kills x ${WORKERS} workers) ` +
    `${JSON.stringify(perThread)}; ${resumed} run(s) finished on attempt > 1 ` +
    `(max attempt ${Math.max(...Object.values(attempts))})`);
  check(duplicates <= maxDup, `kill -9: ${duplicates} duplicate step executions, at most ${maxDup} allowed: ` +
    `committed steps ran again (per thread: ${JSON.stringify(perThread)})`);
  // A kill that hit nothing would make this test vacuous: some run must have
  // been in flight at a kill (it ran on attempt > 1) unless all had finished
  // before the first kill.
  check(resumed > 0 || killedAt[0] >= THREADS * N,
    `kill -9: no run ran on attempt > 1 (checkpoint metadata run_attempt: ${JSON.stringify(Object.values(attempts))}): ` +
    "the kills hit no run in flight, or run_attempt is not recorded");
  const res = await server.stop(10000);
  current = null;
  check(!res.timedOut && res.code === 0, `kill -9: the last server did not exit 0 within 10 s of SIGTERM: ${JSON.stringify(res)}`);
  return { kills, duplicates, maxDup, elapsed };
}

async function sigtermPart() {
  const db = path.join(tmp, "term.db");
  const record = path.join(tmp, "term-record.txt");
  let { server, client } = await start(db, record, "SIGTERM server #1");
  const runs = [];
  for (let i = 0; i < 4; i++) {
    const th = await client.threads.create();
    const run = await client.runs.create(th.thread_id, "recorder", {
      input: { n: N }, config: { recursion_limit: 100 },
    });
    runs.push({ thread_id: th.thread_id, run_id: run.run_id });
  }
  // Mid-run: every run running and with a few steps done, none finished.
  const end = Date.now() + 30000;
  for (;;) {
    const sts = await Promise.all(runs.map((r) => client.runs.get(r.thread_id, r.run_id)));
    const lines = readRecord(record).lines;
    if (sts.every((r) => r.status === "running") && lines >= 8) break;
    check(!sts.some((r) => r.status === "success"), "SIGTERM: a run finished before the SIGTERM (too fast a machine?)");
    check(Date.now() < end, `SIGTERM: the 4 runs were not all running within 30 s: ${sts.map((r) => r.status)}`);
    await sleep(20);
  }
  const before = readRecord(record).lines;
  const t = Date.now();
  const res = await server.stop(10000);
  const ms = Date.now() - t;
  current = null;
  check(!res.timedOut, `SIGTERM: the server did not exit within 10 s (killed)`);
  check(res.code === 0, `SIGTERM: exit code ${res.code} (signal ${res.signal}), want 0`);
  const atStop = readRecord(record).lines;
  ({ server, client } = await start(db, record, "SIGTERM server #2"));
  await waitAllSuccess(() => client, runs, "SIGTERM");
  await checkThreads(client, runs, "SIGTERM", 2);
  const { duplicates, perThread } = checkRecord(record, runs.map((r) => r.thread_id), "SIGTERM");
  console.log(`crash.mjs: SIGTERM: exit 0 in ${ms} ms with ${before}..${atStop} of ${4 * N} steps done; ` +
    `after the restart all 4 runs success; ${duplicates} duplicate(s) ${JSON.stringify(perThread)}`);
  // A graceful stop lets the steps in flight finish and commit (the run stops
  // at a superstep boundary): nothing runs twice.
  check(duplicates === 0, `SIGTERM: ${duplicates} step(s) ran twice after a graceful stop (per thread ${JSON.stringify(perThread)}): ` +
    "the runs did not stop at a superstep boundary");
  const res2 = await server.stop(10000);
  current = null;
  check(!res2.timedOut && res2.code === 0, `SIGTERM: the restarted server did not exit 0: ${JSON.stringify(res2)}`);
  return { ms, duplicates };
}

let failed = false;
const t0 = Date.now();
console.log(`crash.mjs: seed ${opts.seed} (replay with --seed ${opts.seed}), tmp ${tmp}`);
try {
  const k = await killPart();
  const s = await sigtermPart();
  console.log(`crash.mjs: OK in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${k.kills} x kill -9 during ${THREADS} runs ` +
    `-> all success, ${k.duplicates}/${k.maxDup} duplicate steps; SIGTERM -> exit 0 in ${s.ms} ms, resumed, ` +
    `${s.duplicates} duplicates`);
} catch (e) {
  failed = true;
  console.error(`crash.mjs: FAIL: ${e instanceof Fail ? e.message : e.stack ?? e}`);
}
if (current) {
  const s = current;
  current = null;
  await s.stop(5000);
}
await sleep(50);
if (failed) {
  console.error(`--- server stderr (tail) ---\n${stderrLog.slice(-4000)}`);
  console.error(`crash.mjs: seed ${opts.seed}; files kept in ${tmp}`);
} else if (!opts.keep) {
  fs.rmSync(tmp, { recursive: true, force: true });
} else {
  console.log(`crash.mjs: kept ${tmp}`);
}
process.exit(failed ? 1 : 0);
