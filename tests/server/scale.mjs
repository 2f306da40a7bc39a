#!/usr/bin/env node
// Many processes on one PostgreSQL (tests/server/README.md): `superstep serve`
// API processes and `superstep worker` processes, a throwaway PostgreSQL of
// this test's own (tests/pg/cluster.sh: it is stopped and restarted here).
//
//   node scale.mjs --superstep /path/to/superstep [--keep] [--seed N] [--runs N] [--kills N]
//                  [--durability sync|async|exit]
//
// Every run carries the --durability given as its `durability` member (none without it:
// the server's default, async); each part's checks hold in every mode.
//
// 1. kill -9: 1 API process (--workers 0) and 3 worker processes; RUNS
//    background runs of the recorder graph (crash.json; n = 5 steps, each
//    recorded in a side file by the node itself), submitted while every second
//    a random worker holding a run is killed with SIGKILL and a new one
//    started. Every run must end in success with an uninterrupted run's state
//    (count 5, log [1..5]: a step applied twice would show), and only steps in
//    flight at a kill (or at a lease taken over from a worker starved of CPU,
//    which it logs) may have run twice: duplicates <= (kills + takeovers) x
//    threads per worker x R, and each run at most R per attempt of it cut
//    short, R by durability mode: sync 1 (the step in flight), async 2 (and
//    the step whose checkpoint was in flight), exit n (a killed run runs
//    again from its start; it must still end in success, exactly right).
//    With --kills K
//    (the sanitizer builds' small version) there are K kills instead, each once
//    the record holds the next of K evenly spaced shares of the steps.
// 2. PostgreSQL restart: 60 runs; mid-load PostgreSQL is stopped with
//    `pg_ctl stop -m immediate` and started again 3 s later (past the workers'
//    lease): the processes reconnect and every run finishes with the right state.
// 3. Fencing: one worker runs a long run; it is stopped with SIGSTOP past its
//    lease, another worker takes the run over and finishes it; the first one
//    is woken with SIGCONT and must not commit: the state stays an
//    uninterrupted run's, and the woken worker keeps serving (it stops cleanly
//    on SIGTERM).
// 4. Two API processes: a run created through one is streamed through both
//    (the same events, ids and order), a client resuming with Last-Event-ID on
//    the other misses nothing; a cancel sent to one stops a run that a worker
//    behind the other runs.
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { Fail, TIME_SCALE, check, checkRecord, checkRepeatsPerRun, checkThreads, durabilityOf, makeRng, readRecord,
  repeatsPerKill, sleep, waitAllSuccess, waitFor } from "./_durable.mjs";
import { parseArgs, startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CLUSTER = path.join(HERE, "..", "pg", "cluster.sh");
const CONFIG = path.join(HERE, "crash.json");
const N = 5;                 // steps per run
const LEASE_S = 2;           // the workers' lease: a stopped worker's run is taken over after it
const THREADS_PER_WORKER = 2;
const RUN_TIMEOUT_MS = 180000;

const opts = parseArgs("scale.mjs",
  "node scale.mjs --superstep PATH [--keep] [--seed N] [--runs N] [--kills N] [--durability sync|async|exit]",
  { seed: Date.now() % 1000000, runs: 500, kills: 0 }, { numbers: ["seed", "runs", "kills"], lists: ["durability"] });
const { mode: MODE, member: DURABILITY } = durabilityOf(opts, "scale.mjs");
if (!fs.existsSync(path.join(HERE, "node_modules", "@langchain", "langgraph-sdk"))) {
  console.error("scale.mjs: the LangGraph JS SDK is missing: npm ci --prefix tests/server");
  process.exit(1);
}
if (!fs.existsSync("/usr/lib/postgresql")) {
  if (process.env.SST_REQUIRE_POSTGRES === "1") {
    console.error("scale.mjs: FAIL: PostgreSQL's server is not installed and SST_REQUIRE_POSTGRES=1");
    process.exit(1);
  }
  console.log("scale.mjs: PostgreSQL's server is not installed: skipped");
  process.exit(0);
}

const { randInt } = makeRng(opts.seed);
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-scale-test-"));
const pgDir = path.join(tmp, "pg");
const procs = new Set();   // every process running now
const spawned = [];        // every process started
let logs = "";             // every process's stderr, for failure messages

const cluster = (cmd, env = {}) =>
  execFileSync("sh", [CLUSTER, cmd, pgDir], { stdio: ["ignore", "pipe", "pipe"], env: { ...process.env, ...env } });

// A fresh schema per part, as a --db URL.
function schema(base, name) {
  execFileSync("psql", ["-q", base, "-c",
    `SET client_min_messages=warning; DROP SCHEMA IF EXISTS ${name} CASCADE; CREATE SCHEMA ${name}`]);
  return `${base}?options=-csearch_path%3D${name}`;
}

async function spawnProc(command, db, label, extra, record) {
  const args = command === "worker"
    ? ["--db", db, "--workers", String(THREADS_PER_WORKER), "--lease", String(LEASE_S)]
    : ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", "0", "--lease", String(LEASE_S)];
  const p = await startServer({
    superstep: opts.superstep, config: CONFIG, command, args: [...args, ...(extra ?? [])],
    env: { SST_RECORD_FILE: record ?? path.join(tmp, "unused.txt") }, timeoutMs: 30000 * TIME_SCALE,
  });
  p.label = label;
  procs.add(p);
  spawned.push(p);
  p.exited.then(() => { procs.delete(p); logs += `--- ${label} ---\n${p.stderr()}`; });
  return p;
}

const clientOf = (api) => new Client({ apiUrl: api.url, apiKey: null, callerOptions: { maxRetries: 0 } });

async function submit(client, count, n = N) {
  const runs = [];
  for (let i = 0; i < count; i++) {
    const th = await client.threads.create();
    const run = await client.runs.create(th.thread_id, "recorder", {
      input: { n }, config: { recursion_limit: 100 }, ...DURABILITY,
    });
    runs.push({ thread_id: th.thread_id, run_id: run.run_id });
  }
  return runs;
}

async function stopAll(label) {
  for (const p of [...procs]) {
    const res = await p.stop(15000 * TIME_SCALE);
    check(!res.timedOut && res.code === 0, `${label}: ${p.label} did not exit 0 within ${15 * TIME_SCALE} s of SIGTERM: ${JSON.stringify(res)}`);
  }
}

// ---- 1. kill -9 workers under load ----
async function killPart(base) {
  const db = schema(base, "scale_kill");
  const record = path.join(tmp, "kill-record.txt");
  const api = await spawnProc("serve", db, "api", [], record);
  const client = clientOf(api);
  let workers = [];
  for (let i = 0; i < 3; i++) workers.push(await spawnProc("worker", db, `worker #${i + 1}`, [], record));
  const t0 = Date.now();
  // Kills go on while the runs are submitted: on a busy machine the submission is slow
  // enough for the workers to keep up with it, and kills after it would find them idle.
  let submitted = false;
  const submitting = submit(client, opts.runs).then((r) => {
    submitted = true;
    console.log(`scale.mjs: kill -9: ${opts.runs} runs submitted in ${Date.now() - t0} ms`);
    return r;
  });
  let kills = 0, started = 3;
  const heldAtDeath = new Set(); // threads whose run a killed worker held when it died
  // The workers holding a run now (a holder's owner names its pid: common/owner.c).
  const holders = () => {
    const owners = execFileSync("psql", ["-At", base, "-c",
      "SELECT owner FROM scale_kill.sst_runs WHERE status = 'running'"]).toString();
    return workers.filter((w) => owners.includes(` ${w.proc.pid} `));
  };
  const allDone = () => submitted && readRecord(record).lines >= opts.runs * N;
  // Kills a worker that holds a run, waiting for one to (a kill of an idle worker tests
  // nothing); none once every step is recorded.
  const killOne = async () => {
    let busy = [];
    while ((busy = holders()).length === 0) {
      if (allDone() || Date.now() - t0 > RUN_TIMEOUT_MS * TIME_SCALE) return;
      await sleep(50);
    }
    const victim = busy[randInt(0, busy.length - 1)];
    victim.proc.kill("SIGKILL");
    await victim.exited;
    kills++;
    // What it still held when it died (it may have finished a run between the look and
    // the kill): those runs must be claimed again (unless another worker already did).
    for (const line of execFileSync("psql", ["-At", base, "-c",
      "SELECT thread_id, owner FROM scale_kill.sst_runs WHERE status = 'running'"]).toString().split("\n")) {
      const [thread, owner] = line.split("|");
      if (owner?.includes(` ${victim.proc.pid} `)) heldAtDeath.add(thread);
    }
    workers = workers.filter((w) => w !== victim);
    workers.push(await spawnProc("worker", db, `worker #${++started}`, [], record));
  };
  if (opts.kills > 0) {
    // --kills K: the i-th kill once i/(K+1) of the steps are recorded.
    for (let i = 1; i <= opts.kills; i++) {
      const at = Math.floor((opts.runs * N * i) / (opts.kills + 1));
      while (readRecord(record).lines < at && Date.now() - t0 < RUN_TIMEOUT_MS * TIME_SCALE) await sleep(10);
      await killOne();
    }
  } else {
    // Kill while steps remain to be run (every step recorded at least once: nearly done).
    while (!allDone() && Date.now() - t0 < RUN_TIMEOUT_MS * TIME_SCALE) {
      await sleep(1000);
      await killOne();
    }
  }
  const runs = await submitting;
  await waitAllSuccess(() => client, runs, "kill -9", RUN_TIMEOUT_MS);
  const elapsed = Date.now() - t0;
  const attempts = await checkThreads(client, runs, "kill -9", kills + 1, N);
  const { duplicates, perThread, lines } = checkRecord(record, runs.map((r) => r.thread_id), "kill -9", N);
  // A worker starved of CPU past its lease has its runs taken over too (and logs it):
  // like a kill, that lets the steps it had in flight run again.
  const takeovers = spawned.reduce((n, p) => n + (p.stderr().match(/lease was taken over/g) ?? []).length, 0);
  const maxDup = (kills + takeovers) * THREADS_PER_WORKER * repeatsPerKill(MODE, N);
  const resumed = Object.values(attempts).filter((a) => a > 1).length;
  console.log(`scale.mjs: kill -9: ${opts.runs} runs success in ${elapsed} ms through 1 API and 3 workers ` +
    `with ${kills} kills; ${lines} executions for ${opts.runs * N} steps: ${duplicates} duplicate(s) ` +
    `(at most ${maxDup} for durability ${MODE}: ${takeovers} lease(s) taken over from a live worker); ` +
    `${resumed} run(s) finished on attempt > 1; ` +
    `${heldAtDeath.size} run(s) held by a worker when it was killed`);
  check(duplicates <= maxDup, `kill -9: ${duplicates} duplicate step executions, at most ${maxDup}: committed steps ran again (${JSON.stringify(perThread)})`);
  checkRepeatsPerRun(perThread, attempts, MODE, N, "kill -9");
  // The queue counts claims: a run its dead holder kept must have been claimed again.
  const claims = new Map(execFileSync("psql", ["-At", base, "-c", "SELECT thread_id, attempt FROM scale_kill.sst_runs"])
    .toString().trim().split("\n").map((l) => l.split("|")).map(([t, a]) => [t, Number(a)]));
  const notResumed = [...heldAtDeath].filter((t) => !(claims.get(t) > 1));
  check(notResumed.length === 0, `kill -9: runs a killed worker held when it died were not claimed again: ${notResumed.join(", ")}`);
  await stopAll("kill -9");
  return { kills, duplicates, maxDup, elapsed };
}

// ---- 2. PostgreSQL restarted under load ----
async function restartPart(base) {
  const db = schema(base, "scale_restart");
  const record = path.join(tmp, "restart-record.txt");
  const api = await spawnProc("serve", db, "api (restart)", [], record);
  const client = clientOf(api);
  for (let i = 0; i < 2; i++) await spawnProc("worker", db, `worker (restart) #${i + 1}`, [], record);
  const runs = await submit(client, 60);
  await waitFor(() => readRecord(record).lines >= 40, 30000, "restart: the runs did not start within 30 s");
  const t = Date.now();
  // Down longer than the workers' lease: runs still going in a worker may be claimed again
  // meanwhile (by a worker of the same process too), and must still end once, correctly.
  cluster("restart", { SST_PG_DOWN_S: String(LEASE_S + 1) });
  console.log(`scale.mjs: restart: PostgreSQL stopped (-m immediate) and started again ${Date.now() - t} ms later ` +
    `with ${readRecord(record).lines} of ${60 * N} steps recorded`);
  await waitAllSuccess(() => client, runs, "restart", RUN_TIMEOUT_MS);
  await checkThreads(client, runs, "restart", 5, N);
  const { duplicates } = checkRecord(record, runs.map((r) => r.thread_id), "restart", N);
  console.log(`scale.mjs: restart: all 60 runs success; ${duplicates} duplicate step(s)`);
  await stopAll("restart");
}

// ---- 3. fencing: a worker paused past its lease must not commit ----
async function fencingPart(base) {
  const db = schema(base, "scale_fence");
  const record = path.join(tmp, "fence-record.txt");
  const api = await spawnProc("serve", db, "api (fence)", [], record);
  const client = clientOf(api);
  const first = await spawnProc("worker", db, "worker (fence) #1", ["--workers", "1"], record);
  const long = 40;
  const [run] = await submit(client, 1, long);
  await waitFor(() => readRecord(record).lines >= 3, 30000, "fencing: the run did not start within 30 s", 10);
  first.proc.kill("SIGSTOP");
  const stoppedAt = readRecord(record).lines;
  const second = await spawnProc("worker", db, "worker (fence) #2", ["--workers", "1"], record);
  await waitAllSuccess(() => client, [run], "fencing", RUN_TIMEOUT_MS);
  first.proc.kill("SIGCONT");
  // The woken worker tries to go on and must fail to commit: it notices, as its commit is
  // refused or its lease renewal tells it first, because its lease was taken over.
  await waitFor(() => /taken over/.test(first.stderr()), 60000,
    () => `fencing: the woken worker did not log that its lease was taken over:\n${first.stderr().slice(-1500)}`);
  await checkThreads(client, [run], "fencing", 3, long);
  const hist = await client.threads.getHistory(run.thread_id, { limit: 200 });
  const state = await client.threads.getState(run.thread_id);
  check(hist[0].checkpoint.checkpoint_id === state.checkpoint.checkpoint_id, "fencing: history and state disagree");
  check(first.proc.exitCode === null, `fencing: the woken worker died (${first.proc.exitCode}): it must stop the run cleanly`);
  console.log(`scale.mjs: fencing: worker #1 stopped at ${stoppedAt} steps, worker #2 finished the run ` +
    `(attempt 2); woken, worker #1 committed nothing (state [1..${long}], ${hist.length} checkpoints)`);
  await stopAll("fencing");
  void second;
}

// ---- 4. two API processes ----
async function twoApisPart(base) {
  const db = schema(base, "scale_apis");
  const record = path.join(tmp, "apis-record.txt");
  const a = await spawnProc("serve", db, "api A", [], record);
  const b = await spawnProc("serve", db, "api B", [], record);
  await spawnProc("worker", db, "worker (apis)", [], record);
  const ca = clientOf(a), cb = clientOf(b);
  const th = await ca.threads.create();
  const run = await ca.runs.create(th.thread_id, "recorder", { input: { n: 12 }, streamMode: ["values"], ...DURABILITY });
  const collect = async (client, lastEventId) => {
    const out = [];
    for await (const ev of client.runs.joinStream(th.thread_id, run.run_id, { lastEventId })) {
      out.push({ event: ev.event, id: ev.id, data: JSON.stringify(ev.data) });
    }
    return out;
  };
  const [ea, eb] = await Promise.all([collect(ca), collect(cb)]);
  check(ea.length >= 12, `two APIs: A streamed ${ea.length} events, want 12 values at least`);
  check(JSON.stringify(ea) === JSON.stringify(eb), () => `two APIs: A and B streamed different events:\n${JSON.stringify(ea).slice(0, 600)}\n${JSON.stringify(eb).slice(0, 600)}`);
  const mid = ea[Math.floor(ea.length / 2)];
  const rest = await collect(cb, mid.id);
  check(JSON.stringify(rest) === JSON.stringify(ea.slice(ea.indexOf(mid) + 1)),
    `two APIs: B resumed after id ${mid.id} with ${rest.length} events, want the ${ea.length - ea.indexOf(mid) - 1} after it`);
  // A cancel sent to B stops a run created through A, running on the worker.
  const th2 = await ca.threads.create();
  const long = await ca.runs.create(th2.thread_id, "recorder", {
    input: { n: 400 }, config: { recursion_limit: 1000 }, ...DURABILITY,
  });
  // Its steps as the record file shows them (with durability exit, the thread's state shows
  // none until the run ends).
  const ran = () => [...readRecord(record).counts.keys()].filter((k) => k.startsWith(`${th2.thread_id} `)).length;
  await waitFor(() => ran() >= 3, 30000, "two APIs: the long run did not make 3 steps within 30 s");
  const t = Date.now();
  await cb.runs.cancel(th2.thread_id, long.run_id, true);
  const after = await ca.runs.get(th2.thread_id, long.run_id);
  check(after.status === "interrupted", `two APIs: a cancel through B left the run ${after.status}, want interrupted`);
  const st = await ca.threads.getState(th2.thread_id);
  check((st.values?.count ?? 0) < 400, "two APIs: the cancelled run ran to its end");
  await sleep(1500);
  const later = await ca.threads.getState(th2.thread_id);
  check(later.values?.count === st.values?.count, `two APIs: the cancelled run went on (count ${st.values?.count}, then ${later.values?.count})`);
  console.log(`scale.mjs: two APIs: ${ea.length} events alike through A and B, resumed on B after id ${mid.id}; ` +
    `a cancel through B stopped the run in ${Date.now() - t} ms (count ${st.values?.count})`);
  await stopAll("two APIs");
}

let failed = false;
const t0 = Date.now();
console.log(`scale.mjs: seed ${opts.seed} (replay with --seed ${opts.seed}), durability ${MODE}, tmp ${tmp}`);
try {
  cluster("start");
  const base = fs.readFileSync(path.join(pgDir, "url"), "utf8").trim();
  const k = await killPart(base);
  await restartPart(base);
  await fencingPart(base);
  await twoApisPart(base);
  console.log(`scale.mjs: OK in ${((Date.now() - t0) / 1000).toFixed(1)} s (durability ${MODE}): ` +
      `${k.kills} x kill -9 during ${opts.runs} runs ` +
    `-> all success, ${k.duplicates}/${k.maxDup} duplicate steps; restart, fencing and two APIs passed`);
} catch (e) {
  failed = true;
  console.error(`scale.mjs: FAIL: ${e instanceof Fail ? e.message : e.stack ?? e}`);
}
for (const p of [...procs]) {
  p.proc.kill("SIGCONT");
  await p.stop(5000);
}
try { cluster("stop"); } catch { /* reported by the failure above */ }
await sleep(50);
if (failed) {
  console.error(`--- process stderr (tail) ---\n${logs.slice(-6000)}`);
  console.error(`scale.mjs: seed ${opts.seed}; files kept in ${tmp}`);
} else if (!opts.keep) {
  fs.rmSync(tmp, { recursive: true, force: true });
} else {
  console.log(`scale.mjs: kept ${tmp}`);
}
process.exit(failed ? 1 : 0);
