#!/usr/bin/env node
// Durability of `superstep serve`'s background runs (tests/server/README.md).
//
//   node crash.mjs --superstep /path/to/superstep [--keep] [--seed N] [--kills N]
//                  [--durability sync|async|exit]
//
// 1. kill -9: a server (crash.json: the recorder graph only, --workers 4) gets
//    20 threads with one background run each (recorder, n = 30); then 3 to 5
//    times, after a random 150-600 ms, it is killed with SIGKILL and started
//    again on the same database (and record file). All 20 runs must end in
//    success with the state of an uninterrupted run (count 30, log [1..30]),
//    every thread idle, and the record file (a line per execution of a step,
//    written by the node itself) must hold every step at least once and at
//    most kills x workers x R duplicate lines, each run at most R per attempt
//    of it a kill cut short: only the steps in flight at a kill may run
//    twice, a committed step never does. R depends on the runs' durability
//    (--durability: the run's `durability` member; default async, the
//    server's): sync 1 (the step running), async 2 (and the step whose
//    checkpoint was in flight), exit n (a killed run runs again from its
//    start, and must still end in success with exactly the right state).
//    With --kills K (the sanitizer
//    builds' small version) there are K kills instead, each once the record
//    holds the next of K evenly spaced shares of the steps still to run when
//    every run is created, not after a time.
// 2. SIGTERM: a server with 4 running runs exits 0 within 10 s; started
//    again, the runs finish with the right state (no committed step re-run,
//    in every durability mode: a graceful stop commits where the runs stop).
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { Fail, TIME_SCALE, check, checkRecord as checkRecordN, checkRepeatsPerRun, checkThreads as checkThreadsN,
  durabilityOf, makeRng, readRecord, repeatsPerKill, sleep, waitAllSuccess as waitAllSuccessT } from "./_durable.mjs";
import { parseArgs, startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONFIG = path.join(HERE, "crash.json");
const N = 30;          // steps per run
const THREADS = 20;    // threads (one background run each) of the kill -9 part
const WORKERS = 4;
const RUN_TIMEOUT_MS = 120000;

const opts = parseArgs("crash.mjs",
  "node crash.mjs --superstep PATH [--keep] [--seed N] [--kills N] [--durability sync|async|exit]",
  { seed: Date.now() % 1000000, kills: 0 }, { numbers: ["seed", "kills"], lists: ["durability"] });
const { mode: MODE, member: DURABILITY } = durabilityOf(opts, "crash.mjs");
if (!fs.existsSync(path.join(HERE, "node_modules", "@langchain", "langgraph-sdk"))) {
  console.error("crash.mjs: the LangGraph JS SDK is missing: npm ci --prefix tests/server");
  process.exit(1);
}

const { randInt } = makeRng(opts.seed);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-crash-test-"));
let current = null;      // the server running now
let stderrLog = "";      // every incarnation's stderr, for failure messages

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

const checkRecord = (file, ids, label) => checkRecordN(file, ids, label, N);
const checkThreads = (client, runs, label, maxAttempt) => checkThreadsN(client, runs, label, maxAttempt, N);
const waitAllSuccess = (getClient, runs, label) => waitAllSuccessT(getClient, runs, label, RUN_TIMEOUT_MS);

async function killPart() {
  const db = path.join(tmp, "crash.db");
  const record = path.join(tmp, "record.txt");
  let { server, client } = await start(db, record, "server #1");
  const t0 = Date.now();
  const runs = [];
  for (let i = 0; i < THREADS; i++) {
    const th = await client.threads.create();
    const run = await client.runs.create(th.thread_id, "recorder", {
      input: { n: N }, config: { recursion_limit: 100 }, ...DURABILITY,
    });
    runs.push({ thread_id: th.thread_id, run_id: run.run_id });
  }
  const kills = opts.kills > 0 ? opts.kills : randInt(3, 5);
  const killedAt = [];
  // --kills K: shares of the steps still to run once every run is created (on a busy
  // machine the creation is slow enough for the workers to have run most of them).
  const base = readRecord(record).lines;
  for (let i = 0; i < kills; i++) {
    if (opts.kills > 0) {
      const at = base + Math.floor((Math.max(0, THREADS * N - base) * (i + 1)) / (kills + 1));
      const end = Date.now() + RUN_TIMEOUT_MS;
      while (readRecord(record).lines < at && Date.now() < end) await sleep(10);
    } else {
      await sleep(randInt(150, 600));
    }
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
  const maxDup = kills * WORKERS * repeatsPerKill(MODE, N);
  const resumed = Object.values(attempts).filter((a) => a > 1).length;
  console.log(`crash.mjs: kill -9: all ${THREADS} runs success in ${elapsed} ms; ${lines} executions recorded for ` +
    `${THREADS * N} steps: ${duplicates} duplicate(s) (at most ${maxDup} = ${kills} kills x ${WORKERS} workers ` +
    `x ${repeatsPerKill(MODE, N)} for durability ${MODE}) ` +
    `${JSON.stringify(perThread)}; ${resumed} run(s) finished on attempt > 1 ` +
    `(max attempt ${Math.max(...Object.values(attempts))})`);
  check(duplicates <= maxDup, `kill -9: ${duplicates} duplicate step executions, at most ${maxDup} allowed: ` +
    `committed steps ran again (per thread: ${JSON.stringify(perThread)})`);
  checkRepeatsPerRun(perThread, attempts, MODE, N, "kill -9");
  // A kill that hit nothing would make this test vacuous: some run must have
  // been in flight at a kill (it ran on attempt > 1) unless all had finished
  // before the first kill.
  check(resumed > 0 || killedAt[0] >= THREADS * N,
    `kill -9: no run ran on attempt > 1 (checkpoint metadata run_attempt: ${JSON.stringify(Object.values(attempts))}): ` +
    "the kills hit no run in flight, or run_attempt is not recorded");
  const res = await server.stop(10000 * TIME_SCALE);
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
      input: { n: N }, config: { recursion_limit: 100 }, ...DURABILITY,
    });
    runs.push({ thread_id: th.thread_id, run_id: run.run_id });
  }
  // Mid-run: every run running and with a few steps done, none finished.
  const end = Date.now() + 30000 * TIME_SCALE;
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
  const res = await server.stop(10000 * TIME_SCALE);
  const ms = Date.now() - t;
  current = null;
  check(!res.timedOut, `SIGTERM: the server did not exit within ${10 * TIME_SCALE} s (killed)`);
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
console.log(`crash.mjs: seed ${opts.seed} (replay with --seed ${opts.seed}), durability ${MODE}, tmp ${tmp}`);
try {
  const k = await killPart();
  const s = await sigtermPart();
  console.log(`crash.mjs: OK in ${((Date.now() - t0) / 1000).toFixed(1)} s (durability ${MODE}): ` +
      `${k.kills} x kill -9 during ${THREADS} runs ` +
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
