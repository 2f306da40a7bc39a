// Thread TTL: `ttl: {strategy: "delete", ttl: minutes}` of threads.create /
// threads.update (the SDK turns a bare number into that object). A thread not
// updated for its TTL is deleted by the server's sweep (every 2 s), with its
// runs, unless it is busy or has a pending or running run.
//
// The servers here are this file's own, started with the test knob
// SST_SERVE_TTL_CLOCK_OFFSET_MS=3660000: their TTL clock runs 61 minutes
// ahead, so a TTL of 1 minute has passed at once and one of 120 minutes has
// not. Threads whose TTL is set to 1 minute while it has passed could be
// swept before the next call, so the tests that need a thread to live first
// give it 120 minutes and shorten it only when it may go.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ASSISTANT, longCounter, makeClient, randomUUID, rejects, waitFor } from "./_lib.mjs";
import { startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONFIG = path.join(HERE, "langgraph.json");
const SUPERSTEP = process.env.SST_SUPERSTEP;
const skip = SUPERSTEP ? false : "needs SST_SUPERSTEP (run.mjs --superstep PATH): starts servers of its own";
const KNOB = { SST_SERVE_TTL_CLOCK_OFFSET_MS: String(61 * 60 * 1000) };

async function stopClean(server) {
  const res = await server.stop(10000);
  assert.equal(res.timedOut, false, "the server exits within 10 s of SIGTERM");
  assert.equal(res.code, 0, `exit code after SIGTERM: ${res.code} (signal ${res.signal})\n${server.stderr()}`);
}

// True once GET /threads/{id} answers 404 (any other failure throws).
async function gone(c, id) {
  try {
    await c.threads.get(id);
    return false;
  } catch (e) {
    if (e.status === 404) return true;
    throw e;
  }
}

describe("thread TTL (SST_SERVE_TTL_CLOCK_OFFSET_MS: 61 minutes ahead)", { skip }, () => {
  let dir;
  let server; // on dir/ttl.db, with the knob
  let mem; // on :memory:, with the knob
  let c;
  let m;
  const before_restart = {}; // threads made by a first server without the knob
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sst-ttl-test-"));
    const db = path.join(dir, "ttl.db");
    const args = (d) => ["--host", "127.0.0.1", "--port", "0", "--db", d, "--workers", "2"];
    // A first server without the knob: TTLs of 1 minute do not pass while it runs.
    const first = await startServer({ superstep: SUPERSTEP, config: CONFIG, args: args(db) });
    try {
      const f = makeClient({ apiUrl: first.url });
      before_restart.expires = (await f.threads.create({ ttl: 1 })).thread_id;
      const longer = await f.threads.create({ ttl: { strategy: "delete", ttl: 1 } });
      await f.threads.update(longer.thread_id, { ttl: 120 });
      before_restart.longer = longer.thread_id;
      const cleared = await f.threads.create({ ttl: 1 });
      await f.threads.update(cleared.thread_id, { ttl: null });
      before_restart.cleared = cleared.thread_id;
      const metaOnly = await f.threads.create({ ttl: 1 });
      await f.threads.update(metaOnly.thread_id, { metadata: { touched: true } }); // no ttl: the TTL stays
      before_restart.metaOnly = metaOnly.thread_id;
    } finally {
      await stopClean(first);
    }
    [server, mem] = await Promise.all([
      startServer({ superstep: SUPERSTEP, config: CONFIG, env: KNOB, args: args(db) }),
      startServer({ superstep: SUPERSTEP, config: CONFIG, env: KNOB, args: args(":memory:") }),
    ]);
    c = makeClient({ apiUrl: server.url });
    m = makeClient({ apiUrl: mem.url });
  });
  after(async () => {
    for (const s of [server, mem]) {
      if (s) await stopClean(s);
    }
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  test("bad ttl shapes are refused (400 naming the member), on create and patch", async () => {
    const post = (body) => fetch(`${server.url}/threads`, {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const t = await c.threads.create({ ttl: { ttl: 120 } });
    const patch = (body) => fetch(`${server.url}/threads/${t.thread_id}`, {
      method: "PATCH", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const bad = [
      [{ ttl: "x" }, "ttl"],
      [{ ttl: [1] }, "ttl"],
      [{ ttl: {} }, "ttl.ttl"],
      [{ ttl: { strategy: "delete" } }, "ttl.ttl"],
      [{ ttl: { ttl: "5" } }, "ttl.ttl"],
      [{ ttl: { ttl: 0 } }, "ttl.ttl"],
      [{ ttl: { ttl: -1 } }, "ttl.ttl"],
      [{ ttl: { ttl: 1e12 } }, "ttl.ttl"],
      [{ ttl: { strategy: "keep_latest", ttl: 5 } }, "ttl.strategy"],
      [{ ttl: { strategy: 1, ttl: 5 } }, "ttl.strategy"],
      [{ ttl: { ttl: 5, every: 1 } }, "ttl.every"],
    ];
    for (const [body, name] of bad) {
      for (const [what, send] of [["POST /threads", post], ["PATCH /threads/{id}", patch]]) {
        const res = await send(body);
        assert.equal(res.status, 400, `${what} ${JSON.stringify(body)}: want 400, got ${res.status}`);
        const detail = (await res.json()).detail;
        assert.ok(detail.includes(`'${name}'`), `${what} ${JSON.stringify(body)}: ${JSON.stringify(detail)} names ${name}`);
      }
    }
    // The SDK's own shapes are accepted; the Thread object (schema.d.ts) has no ttl member.
    // TTLs longer than the knob's 61 minutes, so that no sweep takes them before the delete.
    for (const ttl of [120, 120.5, { ttl: 120 }, { strategy: "delete", ttl: 120 }]) {
      const made = await c.threads.create({ ttl });
      assert.ok(!("ttl" in made), "Thread has no ttl member");
      await c.threads.delete(made.thread_id);
    }
    await rejects(c.threads.update(randomUUID(), { ttl: 5 }), 404);
  });

  test("the sweep deletes what passed its TTL (and its runs), keeps the rest, skips busy threads", async () => {
    // Busy: a long run, then a TTL that has passed. The sweep must wait for the run.
    const busy = await c.threads.create({ ttl: 120 });
    const long = await c.runs.create(busy.thread_id, "counter", longCounter(80, 100));
    await waitFor("the long run to be running", async () => (await c.runs.get(busy.thread_id, long.run_id)).status === "running");
    await c.threads.update(busy.thread_id, { ttl: 1 });
    // Pending: a run waiting to start keeps its thread too.
    const pending = await c.threads.create({ ttl: 120 });
    const later = await c.runs.create(pending.thread_id, "chain", { input: { items: [] }, afterSeconds: 30 });
    await c.threads.update(pending.thread_id, { ttl: 1 });

    // Expire, with a finished run: the run goes too.
    const withRun = await c.threads.create({ ttl: 120 });
    const done = await c.runs.create(withRun.thread_id, "chain", { input: { items: ["x"] } });
    await c.runs.join(withRun.thread_id, done.run_id);
    await c.threads.update(withRun.thread_id, { ttl: 1 }); // shortened: passed

    const noTtl = await c.threads.create({ metadata: { ttl: "none" } });
    const longTtl = await c.threads.create({ ttl: 120 }); // 120 minutes > 61: not yet
    const expires = await c.threads.create({ ttl: 1 });

    await waitFor("the threads whose TTL passed to be deleted", async () =>
      (await gone(c, expires.thread_id)) && (await gone(c, withRun.thread_id)) &&
      (await gone(c, before_restart.expires)) && (await gone(c, before_restart.metaOnly)), 8000, 100);
    assert.match(server.stderr(), /TTL clock is moved by 3660000 ms/, "the knob is logged");
    assert.match(server.stderr(), new RegExp(`deleted thread ${expires.thread_id}`), "deletions are logged");

    // Its runs are gone: a new thread of the same id has none.
    await rejects(c.runs.get(withRun.thread_id, done.run_id), 404);
    await c.threads.create({ threadId: withRun.thread_id });
    assert.deepEqual(await c.runs.list(withRun.thread_id), [], "the deleted thread's runs are gone");

    // The sweep that deleted them looked at every TTL written before: these stay.
    for (const [what, id] of [["no ttl", noTtl.thread_id], ["ttl 120", longTtl.thread_id],
      ["patched to 120 before a restart", before_restart.longer], ["ttl cleared before a restart", before_restart.cleared],
      ["busy", busy.thread_id], ["pending run", pending.thread_id]]) {
      assert.equal((await c.threads.get(id)).thread_id, id, `${what}: kept`);
    }
    assert.equal((await c.runs.get(busy.thread_id, long.run_id)).status, "running", "the busy thread's run goes on");
    assert.equal((await c.runs.get(pending.thread_id, later.run_id)).status, "pending");

    // Once idle, they go: the pending run cancelled, the long one cancelled.
    await c.runs.cancel(pending.thread_id, later.run_id);
    await c.runs.cancel(busy.thread_id, long.run_id, true);
    await waitFor("the threads to be deleted once idle", async () =>
      (await gone(c, pending.thread_id)) && (await gone(c, busy.thread_id)), 8000, 100);
    assert.equal((await c.threads.get(longTtl.thread_id)).thread_id, longTtl.thread_id);

    // Clearing and deleting: a thread deleted by hand leaves no TTL behind to delete a
    // new thread of the same id.
    const again = await c.threads.create({ ttl: 120 });
    await c.threads.update(again.thread_id, { ttl: null });
    const sentinel = await c.threads.create({ ttl: 1 });
    await waitFor("the sentinel to be deleted", () => gone(c, sentinel.thread_id), 8000, 100);
    assert.equal((await c.threads.get(again.thread_id)).thread_id, again.thread_id, "ttl: null cleared the TTL");
  });

  test("the same on a :memory: database", async () => {
    const keep = await m.threads.create();
    const t = await m.threads.create({ ttl: 120 });
    const out = await m.runs.wait(t.thread_id, ASSISTANT.chain, { input: { items: ["m"] } });
    assert.ok(out);
    await m.threads.update(t.thread_id, { ttl: { strategy: "delete", ttl: 1 } });
    await waitFor("the thread to be deleted", () => gone(m, t.thread_id), 8000, 100);
    assert.equal((await m.threads.get(keep.thread_id)).thread_id, keep.thread_id);
  });
});
