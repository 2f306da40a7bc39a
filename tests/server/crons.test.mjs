// Crons: client.crons.createForThread / create / search / count / update / delete,
// the Cron object's shape (the SDK's schema.d.ts `Cron`), next_run_date, errors,
// and crons firing. LangGraph.js's own server does not implement crons (it
// answers "not implemented"), so everything here is skipped against it.
//
// Firing is tested on servers of this file's own, started with the test knob
// SST_SERVE_CRON_CLOCK_OFFSET_MS=60000: their cron clock runs a minute ahead,
// so a cron whose next_run_date is the coming minute is due at once and fires
// at the next tick (about a second) instead of up to a minute later. The
// schedules fire once an hour (at the coming minute), so a second run within
// the test would be a repeated fire.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  ASSISTANT, ISO_RE, ON_PEER, UUID_RE, client, makeClient, randomUUID, raw, assertProblem, rejects, sleep, uuid5,
  waitFor,
} from "./_lib.mjs";
import { startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SUPERSTEP = process.env.SST_SUPERSTEP;
const skip = ON_PEER ? "LangGraph.js's server does not implement crons" : false;
const skipOwn = skip || (SUPERSTEP ? false : "needs SST_SUPERSTEP (run.mjs --superstep PATH): starts servers of its own");

const CRON_KEYS = ["assistant_id", "created_at", "cron_id", "enabled", "end_time", "metadata", "next_run_date",
  "on_run_completed", "payload", "schedule", "thread_id", "timezone", "updated_at", "user_id"];
const HOUR = 3600 * 1000;

// The first time strictly after `fromIso` at hh:mm UTC.
function nextDaily(fromIso, hh, mm) {
  const from = new Date(fromIso);
  let t = Date.UTC(from.getUTCFullYear(), from.getUTCMonth(), from.getUTCDate(), hh, mm);
  if (t <= from.getTime()) t += 24 * HOUR;
  return new Date(t).toISOString();
}
const nextNewYear = (fromIso) => new Date(Date.UTC(new Date(fromIso).getUTCFullYear() + 1, 0, 1)).toISOString();

// Crons made on the shared server are deleted when the file ends, so none of them
// fires during other files' tests.
const made = [];
async function track(promise) {
  const c = await promise;
  made.push(c.cron_id);
  return c;
}
after(async () => {
  if (skip) return;
  for (const id of made) {
    try { await client.crons.delete(id); } catch { /* deleted by the test */ }
  }
});

describe("crons on the shared server", { skip }, () => {
  test("createForThread: the Cron object, next_run_date from the schedule (UTC)", async () => {
    const t = await client.threads.create();
    const c = await track(client.crons.createForThread(t.thread_id, "chain", {
      schedule: "0 0 1 1 *", input: { items: ["x"] }, metadata: { owner: "crons.test" }, config: { tags: ["t"] },
    }));
    assert.deepEqual(Object.keys(c).sort(), CRON_KEYS, "exactly the fields of the SDK's Cron type");
    assert.match(c.cron_id, UUID_RE);
    assert.equal(c.assistant_id, ASSISTANT.chain, "a graph id is resolved to its assistant");
    assert.equal(c.thread_id, t.thread_id);
    assert.equal(c.on_run_completed, null, "on_run_completed is for stateless crons only");
    assert.equal(c.end_time, null);
    assert.equal(c.schedule, "0 0 1 1 *");
    assert.equal(c.timezone, null);
    assert.match(c.created_at, ISO_RE);
    assert.equal(c.updated_at, c.created_at);
    assert.equal(c.user_id, null);
    assert.deepEqual(c.metadata, { owner: "crons.test" });
    assert.equal(c.enabled, true);
    assert.deepEqual(c.payload, {
      assistant_id: "chain", input: { items: ["x"] }, metadata: { owner: "crons.test" }, config: { tags: ["t"] },
    }, "the payload is the run request, as given");
    assert.equal(c.next_run_date, nextNewYear(c.created_at));

    const d = await track(client.crons.createForThread(t.thread_id, ASSISTANT.chain, { schedule: "30 6 * * *" }));
    assert.equal(d.next_run_date, nextDaily(d.created_at, 6, 30));
    assert.deepEqual(d.metadata, {});
    assert.deepEqual(d.payload, { assistant_id: ASSISTANT.chain });
  });

  test("create (stateless): thread_id null, on_run_completed delete by default or keep, end_time, timezone", async () => {
    const c = await track(client.crons.create("chain", { schedule: "@yearly", input: { items: [] } }));
    assert.deepEqual(Object.keys(c).sort(), CRON_KEYS);
    assert.equal(c.thread_id, null);
    assert.equal(c.on_run_completed, "delete");
    assert.equal(c.next_run_date, nextNewYear(c.created_at), "@yearly is 0 0 1 1 *");

    const end = "2099-06-30T12:00:00.000Z";
    const k = await track(client.crons.create(ASSISTANT.counter, {
      schedule: "30 6 * * *", onRunCompleted: "keep", endTime: end, timezone: "UTC",
    }));
    assert.equal(k.on_run_completed, "keep");
    assert.equal(k.assistant_id, ASSISTANT.counter);
    assert.equal(k.end_time, end);
    assert.equal(k.timezone, "UTC");
    assert.equal(k.next_run_date, nextDaily(k.created_at, 6, 30));

    // An offset end_time is kept as the same instant, in UTC.
    const o = await track(client.crons.create("chain", { schedule: "30 6 * * *", endTime: "2099-06-30T14:00:00+02:00" }));
    assert.equal(o.end_time, end);

    // Past its end_time: no next run.
    const past = await track(client.crons.create("chain", { schedule: "* * * * *", endTime: "2020-01-01T00:00:00Z" }));
    assert.equal(past.next_run_date, null);
    // A schedule that never comes (Feb 30): no next run either.
    const never = await track(client.crons.create("chain", { schedule: "0 0 30 2 *" }));
    assert.equal(never.next_run_date, null);
  });

  test("search: metadata, threadId, assistantId (uuid or graph id), enabled, limit/offset, sort, select", async () => {
    const tag = randomUUID();
    const t1 = await client.threads.create();
    const t2 = await client.threads.create();
    const c1 = await track(client.crons.createForThread(t1.thread_id, "chain", { schedule: "0 0 1 1 *", metadata: { tag } }));
    await sleep(5);
    const c2 = await track(client.crons.createForThread(t2.thread_id, "counter", { schedule: "30 6 * * *", metadata: { tag } }));
    await sleep(5);
    const c3 = await track(client.crons.create("chain", {
      schedule: "* * * * *", endTime: "2020-01-01T00:00:00Z", enabled: false, metadata: { tag, n: 3 },
    }));
    const ids = (list) => list.map((c) => c.cron_id);

    const all = await client.crons.search({ metadata: { tag } });
    assert.deepEqual(ids(all), [c3.cron_id, c2.cron_id, c1.cron_id], "newest first by default");
    assert.deepEqual(all[2], c1, "search returns the Cron objects as created");
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag, n: 3 } })), [c3.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, threadId: t1.thread_id })), [c1.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ threadId: t2.thread_id })), [c2.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, assistantId: "chain" })), [c3.cron_id, c1.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, assistantId: ASSISTANT.chain })),
      [c3.cron_id, c1.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, assistantId: ASSISTANT.counter })), [c2.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, enabled: false })), [c3.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, enabled: true })), [c2.cron_id, c1.cron_id]);

    // limit / offset
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, limit: 2 })), [c3.cron_id, c2.cron_id]);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, limit: 2, offset: 2 })), [c1.cron_id]);
    assert.deepEqual(await client.crons.search({ metadata: { tag }, offset: 3 }), []);

    // sortBy / sortOrder
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, sortBy: "created_at", sortOrder: "asc" })),
      [c1.cron_id, c2.cron_id, c3.cron_id]);
    const byNext = [c1, c2].sort((a, b) => a.next_run_date.localeCompare(b.next_run_date)).map((c) => c.cron_id);
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, sortBy: "next_run_date", sortOrder: "asc" })),
      [...byNext, c3.cron_id], "next_run_date ascending, a cron with none last");
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, sortBy: "next_run_date", sortOrder: "desc" })),
      [c3.cron_id, ...byNext.reverse()], "descending: a cron with none first");
    const byId = [c1, c2, c3].map((c) => c.cron_id).sort();
    assert.deepEqual(ids(await client.crons.search({ metadata: { tag }, sortBy: "cron_id", sortOrder: "asc" })), byId);

    // select
    const sel = await client.crons.search({ metadata: { tag }, select: ["cron_id", "schedule"], sortOrder: "asc", sortBy: "created_at" });
    assert.deepEqual(sel, [c1, c2, c3].map((c) => ({ cron_id: c.cron_id, schedule: c.schedule })));
  });

  test("count: metadata, assistantId, threadId", async () => {
    const tag = randomUUID();
    const t = await client.threads.create();
    await track(client.crons.createForThread(t.thread_id, "chain", { schedule: "0 0 1 1 *", metadata: { tag } }));
    await track(client.crons.create("chain", { schedule: "0 0 1 1 *", metadata: { tag } }));
    await track(client.crons.create("counter", { schedule: "0 0 1 1 *", metadata: { tag } }));
    assert.equal(await client.crons.count({ metadata: { tag } }), 3);
    assert.equal(await client.crons.count({ metadata: { tag }, assistantId: "chain" }), 2);
    assert.equal(await client.crons.count({ metadata: { tag }, assistantId: ASSISTANT.counter }), 1);
    assert.equal(await client.crons.count({ threadId: t.thread_id }), 1);
    assert.equal(await client.crons.count({ metadata: { tag: randomUUID() } }), 0);
    assert.ok((await client.crons.count()) >= 3, "no filter counts every cron");
  });

  test("update: schedule (next_run_date from now), metadata merged, payload, endTime null clears it, enabled", async () => {
    const c = await track(client.crons.create("chain", {
      schedule: "0 0 1 1 *", metadata: { a: 1 }, input: { items: ["old"] }, endTime: "2099-01-01T00:00:00Z",
    }));
    await sleep(5);
    const u = await client.crons.update(c.cron_id, {
      schedule: "30 6 * * *", metadata: { b: 2 }, input: { items: ["new"] }, endTime: null, enabled: false,
      onRunCompleted: "keep",
    });
    assert.deepEqual(Object.keys(u).sort(), CRON_KEYS);
    assert.equal(u.cron_id, c.cron_id);
    assert.equal(u.schedule, "30 6 * * *");
    assert.equal(u.next_run_date, nextDaily(u.updated_at, 6, 30));
    assert.deepEqual(u.metadata, { a: 1, b: 2 });
    assert.deepEqual(u.payload.input, { items: ["new"] });
    assert.deepEqual(u.payload.metadata, { a: 1, b: 2 });
    assert.equal(u.end_time, null);
    assert.equal(u.enabled, false);
    assert.equal(u.on_run_completed, "keep");
    assert.equal(u.created_at, c.created_at);
    assert.ok(u.updated_at > c.updated_at, "updated_at moves forward");
    const [found] = await client.crons.search({ metadata: { a: 1, b: 2 } });
    assert.deepEqual(found, u, "search sees the update");

    // Only what is given changes: an update of the metadata alone keeps the rest.
    const v = await client.crons.update(c.cron_id, { metadata: { c: 3 } });
    assert.equal(v.schedule, "30 6 * * *");
    assert.equal(v.next_run_date, u.next_run_date);
    assert.equal(v.enabled, false);
    assert.deepEqual(v.metadata, { a: 1, b: 2, c: 3 });

    // An end before the next fire leaves no next run.
    const w = await client.crons.update(c.cron_id, { endTime: "2021-01-01T00:00:00Z", enabled: true });
    assert.equal(w.next_run_date, null);
    assert.equal(w.end_time, "2021-01-01T00:00:00.000Z");
  });

  test("delete: 204, then search no longer has it, and delete / update are 404", async () => {
    const tag = randomUUID();
    const c = await client.crons.create("chain", { schedule: "0 0 1 1 *", metadata: { tag } });
    assert.equal(await client.crons.delete(c.cron_id), undefined);
    assert.deepEqual(await client.crons.search({ metadata: { tag } }), []);
    assert.equal(await client.crons.count({ metadata: { tag } }), 0);
    await rejects(client.crons.delete(c.cron_id), 404, [c.cron_id]);
    await rejects(client.crons.update(c.cron_id, { schedule: "* * * * *" }), 404, [c.cron_id]);
    const r = await raw(`/runs/crons/${c.cron_id}`, { method: "DELETE" });
    assertProblem(r, 404, [c.cron_id]);
    assertProblem(await raw("/runs/crons/not-a-uuid", { method: "DELETE" }), 400, ["cron_id", "not-a-uuid"]);
  });

  test("errors: bad schedule / end_time / timezone 422, unknown assistant or thread 404, bad payload 400", async () => {
    const t = await client.threads.create();
    // The schedule: 422 naming the member, the cron field and its position.
    await rejects(client.crons.createForThread(t.thread_id, "chain", { schedule: "0 0 32 * *" }), 422,
      ["schedule", "day-of-month", "position 5", "32"]);
    await rejects(client.crons.create("chain", { schedule: "* * * *" }), 422, ["schedule", "5 fields"]);
    await rejects(client.crons.create("chain", { schedule: "*/0 * * * *" }), 422, ["schedule", "minute", "step"]);
    await rejects(client.crons.create("chain", { schedule: "0 0 * * FUNDAY" }), 422, ["schedule", "day-of-week", "FUNDAY"]);
    await rejects(client.crons.create("chain", {}), 422, ["schedule"]);
    await rejects(client.crons.create("chain", { schedule: "0 0 1 1 *", endTime: "tomorrow" }), 422, ["end_time", "tomorrow"]);
    await rejects(client.crons.create("chain", { schedule: "0 0 1 1 *", timezone: "America/New_York" }), 422,
      ["timezone", "America/New_York", "UTC"]);
    await rejects(client.crons.update(randomUUID(), { schedule: "61 * * * *" }), 422, ["schedule", "minute"]);
    // Unknown assistant or thread: 404 naming it.
    const missing = randomUUID();
    await rejects(client.crons.create(missing, { schedule: "0 0 1 1 *" }), 404, [missing]);
    await rejects(client.crons.create("no-such-graph", { schedule: "0 0 1 1 *" }), 404, ["no-such-graph"]);
    const noThread = randomUUID();
    await rejects(client.crons.createForThread(noThread, "chain", { schedule: "0 0 1 1 *" }), 404, [noThread]);
    await rejects(client.crons.createForThread("nope", "chain", { schedule: "0 0 1 1 *" }), 400, ["thread_id"]);
    // The run payload is checked when the cron is made, as POST /runs would.
    await rejects(client.crons.create("chain", { schedule: "0 0 1 1 *", config: "x" }), 400, ["config"]);
    await rejects(client.crons.create("chain", { schedule: "0 0 1 1 *", multitaskStrategy: "bogus" }), 400,
      ["multitask_strategy", "bogus"]);
    await rejects(client.crons.create("chain", { schedule: "0 0 1 1 *", streamMode: ["events"] }), 400, ["events"]);
    await rejects(client.crons.create("chain", { schedule: "0 0 1 1 *", webhook: "ftp://x" }), 400, ["webhook"]);
    await rejects(client.crons.create("chain", { schedule: 5 }), 400, ["schedule"]);
    await rejects(client.crons.search({ sortBy: "schedule" }), 400, ["sort_by"]);
    await rejects(client.crons.search({ select: ["bogus"] }), 400, ["select", "bogus"]);
    const r = await raw("/runs/crons", { method: "POST", json: { assistant_id: "chain", schedule: "0 0 1 1 *", bogus: 1 } });
    assertProblem(r, 400, ["bogus"]);
    assert.equal(await client.crons.count({ threadId: t.thread_id }), 0, "nothing was made");
  });
});

// ---- firing, on servers of this file's own -----------------------------------------

// Stays clear of the end of a minute: a test that reads the coming minute then creates a
// cron must not see the minute change in between.
async function awayFromMinuteEdge(marginMs = 4000) {
  const into = Date.now() % 60000;
  if (into > 60000 - marginMs) await sleep(60000 - into + 200);
}
// Fires once an hour, at the coming minute (which the test servers see as due).
function hourlyAtComingMinute() {
  return `${new Date(Date.now() + 60000).getUTCMinutes()} * * * *`;
}

async function hookServer() {
  const got = [];
  const srv = http.createServer((req, res) => {
    let body = "";
    req.on("data", (d) => { body += d; });
    req.on("end", () => {
      got.push({ method: req.method, url: req.url, body });
      res.end("ok");
    });
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return { got, url: `http://127.0.0.1:${srv.address().port}`, close: () => new Promise((r) => srv.close(r)) };
}

// Waits for the thread's runs to have all ended with success; returns them.
async function runsDone(c, threadId, what) {
  return waitFor(what, async () => {
    const rs = await c.runs.list(threadId);
    return rs.length > 0 && rs.every((r) => r.status === "success") ? rs : null;
  }, 10000);
}

describe("crons firing (SST_SERVE_CRON_CLOCK_OFFSET_MS=60000)", { skip: skipOwn }, () => {
  let dir;
  let one;
  let two;
  let a;
  let b;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sst-crons-test-"));
    const start = () => startServer({
      superstep: SUPERSTEP, config: path.join(HERE, "langgraph.json"),
      env: { SST_SERVE_CRON_CLOCK_OFFSET_MS: "60000" },
      args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(dir, "crons.db"), "--shared-db", "--workers", "2"],
    });
    one = await start();
    two = await start(); // the same database: both fire the same crons
    a = makeClient({ apiUrl: one.url });
    b = makeClient({ apiUrl: two.url });
  });
  after(async () => {
    for (const s of [one, two]) {
      if (!s) continue;
      const res = await s.stop(10000);
      assert.equal(res.timedOut, false, "the server exits within 10 s of SIGTERM");
      assert.equal(res.code, 0, `exit code after SIGTERM: ${res.code}\n${s.stderr()}`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("a thread cron fires once: a run with the payload, on its thread, with the fire's id; next_run_date moves on", async () => {
    await awayFromMinuteEdge();
    const t = await a.threads.create();
    const cron = await a.crons.createForThread(t.thread_id, "chain", {
      schedule: hourlyAtComingMinute(), input: { items: ["cron"] }, metadata: { from: "cron" },
    });
    const fire = Date.parse(cron.next_run_date);
    assert.ok(fire > Date.parse(cron.created_at) && fire - Date.parse(cron.created_at) <= 60000, "due in the coming minute");
    const runs = await runsDone(a, t.thread_id, "the cron's run to succeed");
    assert.equal(runs.length, 1);
    const [run] = runs;
    assert.equal(run.run_id, uuid5(`run:${fire}`, cron.cron_id), "the run id is uuid5(cron_id, run:<fire ms>)");
    assert.equal(run.thread_id, t.thread_id);
    assert.equal(run.assistant_id, ASSISTANT.chain);
    assert.deepEqual(run.metadata, { from: "cron" });
    assert.deepEqual(run.kwargs.input, { items: ["cron"] });
    assert.deepEqual((await a.threads.getState(t.thread_id)).values, { items: ["cron", "a", "b", "c"] });
    // Further ticks (every second, by both servers) see the fire done.
    await sleep(2500);
    assert.equal((await a.runs.list(t.thread_id)).length, 1, "the fire is not repeated");
    const [now] = await b.crons.search({ threadId: t.thread_id });
    assert.equal(Date.parse(now.next_run_date), fire + HOUR, "next_run_date is the next hour's");
    assert.equal(now.updated_at, cron.updated_at, "a fire is not an update");
    await a.crons.delete(cron.cron_id);
  });

  test("two servers on one database fire a cron once", async () => {
    await awayFromMinuteEdge();
    const t = await b.threads.create();
    const cron = await b.crons.createForThread(t.thread_id, "chain", { schedule: hourlyAtComingMinute(), input: { items: ["2"] } });
    assert.equal((await a.crons.search({ threadId: t.thread_id })).length, 1, "the other server sees the cron");
    await runsDone(a, t.thread_id, "the cron's run to succeed");
    await sleep(2500);
    const runs = await b.runs.list(t.thread_id);
    assert.equal(runs.length, 1, "one run for the two servers");
    assert.equal(runs[0].run_id, uuid5(`run:${Date.parse(cron.next_run_date)}`, cron.cron_id));
    await b.crons.delete(cron.cron_id);
  });

  test("a stateless cron runs on a new thread; on_run_completed delete removes it after the run", async () => {
    const hook = await hookServer();
    try {
      await awayFromMinuteEdge();
      const cron = await a.crons.create("chain", {
        schedule: hourlyAtComingMinute(), input: { items: ["s"] }, webhook: `${hook.url}/cron`,
      });
      assert.equal(cron.on_run_completed, "delete");
      const fire = Date.parse(cron.next_run_date);
      await waitFor("the run's webhook", () => hook.got.length > 0, 10000);
      const body = JSON.parse(hook.got[0].body);
      assert.equal(body.run_id, uuid5(`run:${fire}`, cron.cron_id));
      assert.equal(body.status, "success");
      assert.deepEqual(body.values, { items: ["s", "a", "b", "c"] });
      const tid = uuid5(`thread:${fire}`, cron.cron_id);
      await rejects(a.threads.get(tid), 404, [tid]);
      await sleep(1500);
      assert.equal(hook.got.length, 1, "one run");
      await a.crons.delete(cron.cron_id);
    } finally {
      await hook.close();
    }
  });

  test("a stateless cron with on_run_completed keep leaves its thread, with the run's state", async () => {
    await awayFromMinuteEdge();
    const cron = await a.crons.create("counter", { schedule: hourlyAtComingMinute(), input: { n: 3 }, onRunCompleted: "keep" });
    const fire = Date.parse(cron.next_run_date);
    const tid = uuid5(`thread:${fire}`, cron.cron_id);
    const thread = await waitFor("the cron's thread, idle with its values", async () => {
      try {
        const th = await a.threads.get(tid);
        return th.status === "idle" && th.values?.count === 3 ? th : null;
      } catch (e) {
        if (e.status === 404) return null;
        throw e;
      }
    }, 10000);
    assert.equal(thread.metadata.graph_id, "counter");
    assert.equal(thread.metadata.assistant_id, ASSISTANT.counter);
    const runs = await runsDone(a, tid, "the run to succeed");
    assert.equal(runs.length, 1);
    assert.equal(runs[0].run_id, uuid5(`run:${fire}`, cron.cron_id));
    await a.crons.delete(cron.cron_id);
    await a.threads.delete(tid);
  });

  test("a disabled cron does not fire; enabled again, it does", async () => {
    const t = await a.threads.create();
    const cron = await a.crons.createForThread(t.thread_id, "chain", {
      schedule: "* * * * *", input: { items: ["e"] }, enabled: false,
    });
    assert.equal(cron.enabled, false);
    await sleep(2500);
    assert.equal((await a.runs.list(t.thread_id)).length, 0, "no run while disabled");
    const on = await b.crons.update(cron.cron_id, { enabled: true });
    assert.equal(on.enabled, true);
    const runs = await runsDone(a, t.thread_id, "a run once enabled");
    assert.deepEqual(runs[0].kwargs.input, { items: ["e"] });
    await a.crons.delete(cron.cron_id);
  });

  test("a cron whose thread was deleted is deleted at its fire; its end_time stops it", async () => {
    // Made disabled, so that it cannot fire before its thread is deleted; then enabled.
    const t = await a.threads.create();
    const cron = await a.crons.createForThread(t.thread_id, "chain", { schedule: "* * * * *", enabled: false });
    await a.threads.delete(t.thread_id);
    await a.crons.update(cron.cron_id, { enabled: true });
    await waitFor("the cron to be gone", async () => (await a.crons.count({ threadId: t.thread_id })) === 0, 10000);
    await rejects(a.crons.delete(cron.cron_id), 404, [cron.cron_id]);

    // Due now, but its end_time is before the fire: not fired, and no next run.
    await awayFromMinuteEdge();
    const t2 = await a.threads.create();
    const ended = await a.crons.createForThread(t2.thread_id, "chain", {
      schedule: "* * * * *", endTime: new Date(Date.now() + 200).toISOString(),
    });
    assert.equal(ended.next_run_date, null);
    await sleep(2000);
    assert.equal((await a.runs.list(t2.thread_id)).length, 0);
    await a.crons.delete(ended.cron_id);
  });
});
