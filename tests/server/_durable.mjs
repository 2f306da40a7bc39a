// Checks shared by the durability tests (crash.mjs on SQLite, scale.mjs on
// PostgreSQL): the recorder graph's record file, runs polled to success, and
// each thread's state against an uninterrupted run's.
import fs from "node:fs";

export class Fail extends Error {}
export function fail(msg) { throw new Fail(msg); }
export function check(cond, msg) { if (!cond) fail(typeof msg === "function" ? msg() : msg); }
export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Deadlines are there only so that what never happens fails instead of hanging: they
// are many times what they take, and SST_TEST_TIME_SCALE (docs/testing.md) raises them
// further on slow machines and in sanitizer builds.
export const TIME_SCALE = Math.max(1, Number(process.env.SST_TEST_TIME_SCALE) || 1);
// Polls cond() until it holds; fails with msg() when it did not within ms x TIME_SCALE.
export async function waitFor(cond, ms, msg, every = 20) {
  const end = Date.now() + ms * TIME_SCALE;
  while (!(await cond())) {
    check(Date.now() < end, msg);
    await sleep(every);
  }
}

// A small seeded PRNG (mulberry32): a failure can be replayed with --seed.
export function makeRng(seed) {
  let state = seed >>> 0;
  const rand = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return { rand, randInt: (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)) };
}

// {"<thread> <k>": count} of the record file; bad lines are reported.
export function readRecord(file) {
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

// Every (thread, k) of k = 1..n once at least; returns {duplicates, perThread, lines}.
export function checkRecord(file, threadIds, label, n) {
  const { counts, bad, lines } = readRecord(file);
  check(bad.length === 0, `${label}: ${bad.length} malformed line(s) in the record file: ${JSON.stringify(bad.slice(0, 5))}`);
  const known = new Set(threadIds);
  for (const key of counts.keys()) {
    const [tid, k] = key.split(" ");
    check(known.has(tid), `${label}: the record file names an unknown thread ${tid} (ctx.config.configurable.thread_id wrong?)`);
    check(Number(k) >= 1 && Number(k) <= n, `${label}: the record file has step ${k} of ${tid}, outside 1..${n}`);
  }
  let duplicates = 0;
  const perThread = {};
  for (const tid of threadIds) {
    let d = 0;
    for (let k = 1; k <= n; k++) {
      const c = counts.get(`${tid} ${k}`) ?? 0;
      check(c >= 1, `${label}: step ${k} of thread ${tid} never ran (no "${tid} ${k}" line in the record file)`);
      d += c - 1;
    }
    if (d) perThread[tid] = d;
    duplicates += d;
  }
  return { duplicates, perThread, lines };
}

// Polls runs.get until every run is success; fails at once on a final non-success status.
export async function waitAllSuccess(getClient, runs, label, timeoutMs) {
  timeoutMs *= TIME_SCALE;
  const end = Date.now() + timeoutMs;
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
      fail(`${label}: ${left.length} run(s) not success after ${timeoutMs / 1000} s: ${JSON.stringify(left.slice(0, 5))}`);
    }
    await sleep(200);
  }
}

// State (count n, log [1..n]), thread status and the attempts seen in the checkpoints'
// metadata; returns {thread_id: highest run_attempt}.
export async function checkThreads(client, runs, label, maxAttempt, n) {
  const expectedLog = JSON.stringify(Array.from({ length: n }, (_, i) => i + 1));
  const attempts = {};
  for (const { thread_id, run_id } of runs) {
    const st = await client.threads.getState(thread_id);
    check(st.values?.count === n, `${label}: thread ${thread_id}: count ${st.values?.count}, want ${n} (values ${JSON.stringify(st.values).slice(0, 300)})`);
    check(JSON.stringify(st.values?.log) === expectedLog,
      `${label}: thread ${thread_id}: log ${JSON.stringify(st.values?.log)}, want [1..${n}] (a step lost or applied twice)`);
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

// --durability sync|async|exit (crash.mjs, scale.mjs): the runs' `durability` member. Without
// it the runs carry none and get the server's default, async.
export function durabilityOf(opts, script) {
  const d = opts.durability ?? [];
  if (d.length > 1 || (d.length === 1 && !["sync", "async", "exit"].includes(d[0]))) {
    console.error(`${script}: --durability must be one of sync, async, exit, got '${d.join(",")}'`);
    process.exit(2);
  }
  return { mode: d[0] ?? "async", member: d.length ? { durability: d[0] } : {} };
}

// The most step executions of one run that one kill of its worker (or one lease taken over)
// may repeat, by durability mode (docs/durability.md): sync, the step in flight; async, that
// and the step whose checkpoint was in flight; exit, every step the killed attempt had run
// (n: the run runs again from its start).
export function repeatsPerKill(mode, n) {
  return mode === "sync" ? 1 : mode === "async" ? 2 : n;
}

// Each run's repeated step executions against its own bound: repeatsPerKill for every
// attempt before its last (attempts: {thread_id: the highest run_attempt of its checkpoints}).
export function checkRepeatsPerRun(perThread, attempts, mode, n, label) {
  const per = repeatsPerKill(mode, n);
  for (const [tid, d] of Object.entries(perThread)) {
    const allowed = per * Math.max(0, (attempts[tid] ?? 1) - 1);
    check(d <= allowed, `${label}: thread ${tid} ran ${d} step(s) twice in ${attempts[tid] ?? 1} attempt(s); ` +
      `durability ${mode} allows at most ${per} per attempt cut short (${allowed}): a committed step ran again`);
  }
}
