// POST /threads/{id}/runs/{run}/cancel: wait / no wait, status after, join
// after, a joined stream closing, action=rollback (observed/11_cancel.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  URL_BASE, cancelQuietly, client, longCounter, oursOnly, randomUUID, rejects, runStatus,
  TIME_SCALE, startLongRun, waitFor,
} from "./_lib.mjs";

const cancelRaw = (tid, rid, query = "") =>
  fetch(`${URL_BASE}/threads/${tid}/runs/${rid}/cancel${query}`, { method: "POST" });

test("cancel with wait=1: 204; the run ends interrupted, the thread is idle, join gives null", async () => {
  const t = await client.threads.create();
  const run = await startLongRun(t.thread_id);
  try {
    const res = await cancelRaw(t.thread_id, run.run_id, "?wait=1&action=interrupt");
    assert.equal(res.status, 204);
    assert.equal(await res.text(), "");
    assert.equal(await runStatus(t.thread_id, run.run_id), "interrupted", "status right after a waited cancel");
    const th = await client.threads.get(t.thread_id);
    assert.equal(th.status, "idle");
    assert.equal(await client.runs.join(t.thread_id, run.run_id), null, "join of a cancelled run: null");
    // The steps done so far stay; the next step is still to run.
    const st = await client.threads.getState(t.thread_id);
    assert.ok(st.values.count >= 1 && st.values.count < 400, `count ${st.values.count}`);
    assert.deepEqual(st.next, ["inc"]);
    // The thread takes new runs again.
    const c = st.values.count;
    assert.deepEqual(await client.runs.wait(t.thread_id, "counter", { input: { n: c + 2, delay_ms: 0 } }),
      { n: c + 2, delay_ms: 0, count: c + 2 });
  } finally {
    await cancelQuietly(t.thread_id, run.run_id);
  }
});

test("SDK runs.cancel(thread, run, true) resolves; the run is interrupted", async () => {
  const t = await client.threads.create();
  const run = await startLongRun(t.thread_id);
  try {
    assert.equal(await client.runs.cancel(t.thread_id, run.run_id, true), undefined);
    assert.equal(await runStatus(t.thread_id, run.run_id), "interrupted");
  } finally {
    await cancelQuietly(t.thread_id, run.run_id);
  }
});

test("cancel without a query: 202, the run ends interrupted soon after", async () => {
  const t = await client.threads.create();
  const run = await startLongRun(t.thread_id);
  try {
    const res = await cancelRaw(t.thread_id, run.run_id);
    assert.equal(res.status, 202);
    await waitFor("run interrupted", async () => (await runStatus(t.thread_id, run.run_id)) === "interrupted", 10000);
    await waitFor("thread idle", async () => (await client.threads.get(t.thread_id)).status === "idle", 10000);
  } finally {
    await cancelQuietly(t.thread_id, run.run_id);
  }
});

test("cancel with wait=0 (the SDK's default) is 202 too",
  { skip: oursOnly("LangGraph.js reads wait=0 as true (z.coerce.boolean) and answers 204") }, async () => {
    const t = await client.threads.create();
    const run = await startLongRun(t.thread_id);
    try {
      const res = await cancelRaw(t.thread_id, run.run_id, "?wait=0&action=interrupt");
      assert.equal(res.status, 202);
      await waitFor("run interrupted", async () => (await runStatus(t.thread_id, run.run_id)) === "interrupted", 10000);
    } finally {
      await cancelQuietly(t.thread_id, run.run_id);
    }
  });

test("cancel of an unknown run is 404", async () => {
  const t = await client.threads.create();
  const id = randomUUID();
  await rejects(client.runs.cancel(t.thread_id, id, true), 404, [id]);
});

test("cancel while a client joinStreams the run: the stream closes, without an error event", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "counter", {
    input: { n: 400, delay_ms: 50 }, config: { recursion_limit: 410 }, streamMode: ["updates"],
  });
  try {
    let first;
    const seen = new Promise((r) => { first = r; });
    const joined = (async () => {
      const out = [];
      for await (const c of client.runs.joinStream(t.thread_id, run.run_id)) {
        out.push({ event: c.event, data: c.data, id: c.id });
        if (c.event === "updates") first();
      }
      return out;
    })();
    await Promise.race([seen, new Promise((_, no) => setTimeout(() => no(new Error("no update within 10 s")), 10000 * TIME_SCALE))]);
    await client.runs.cancel(t.thread_id, run.run_id, true);
    // The stream closes at the cancel, not at the run's end: fewer than its 400 updates.
    const chunks = await joined;
    const body = chunks[0]?.event === "metadata" ? chunks.slice(1) : chunks;
    assert.ok(body.length >= 1 && body.length < 400, `${body.length} updates before the cancel`);
    assert.ok(body.every((c) => c.event === "updates" && JSON.stringify(c.data) === '{"inc":{"count":1}}'),
      `only updates, no error event: ${JSON.stringify(body.slice(-3))}`);
    assert.equal(await runStatus(t.thread_id, run.run_id), "interrupted");
  } finally {
    await cancelQuietly(t.thread_id, run.run_id);
  }
});

test("cancel while a client streams (runs.stream): the stream closes and the run is interrupted", async () => {
  const t = await client.threads.create();
  let runId;
  let first;
  const seen = new Promise((r) => { first = r; });
  const streamed = (async () => {
    const out = [];
    for await (const c of client.runs.stream(t.thread_id, "counter", {
      input: { n: 400, delay_ms: 50 }, config: { recursion_limit: 410 }, streamMode: ["values"],
      onRunCreated: (m) => { runId = m.run_id; },
    })) {
      out.push(c);
      if (out.length === 3) first();
    }
    return out;
  })();
  await Promise.race([seen, new Promise((_, no) => setTimeout(() => no(new Error("no events within 10 s")), 10000 * TIME_SCALE))]);
  try {
    await client.runs.cancel(t.thread_id, runId, true);
    const chunks = await streamed;
    assert.ok(chunks.slice(1).every((c) => c.event === "values"), "only values, no error event");
    assert.equal(await runStatus(t.thread_id, runId), "interrupted");
  } finally {
    await cancelQuietly(t.thread_id, runId);
  }
});

test("cancel with action=rollback: the run and its checkpoints are deleted, the thread is back to idle",
  { skip: oursOnly("LangGraph.js does not roll back: the run stays with status error and the thread shows error") },
  async () => {
    const t = await client.threads.create();
    const run = await startLongRun(t.thread_id);
    try {
      const res = await cancelRaw(t.thread_id, run.run_id, "?wait=1&action=rollback");
      assert.equal(res.status, 204);
      await rejects(client.runs.get(t.thread_id, run.run_id), 404, [run.run_id]);
      const th = await client.threads.get(t.thread_id);
      assert.equal(th.status, "idle");
      const st = await client.threads.getState(t.thread_id);
      assert.deepEqual(st.values, {}, "the thread is as before the run");
      assert.deepEqual(await client.threads.getHistory(t.thread_id), []);
    } finally {
      await cancelQuietly(t.thread_id, run.run_id);
    }
  });

// on_disconnect (runs/stream, runs/wait) and ?cancel_on_disconnect (join-stream): a client
// that leaves before the run ends cancels it with "cancel"; with "continue" (the default)
// the run goes on in the background.
async function leaveEarly(path, body, { method = "POST" } = {}) {
  const ac = new AbortController();
  const res = await fetch(`${URL_BASE}${path}`, {
    method, signal: ac.signal,
    headers: body ? { "content-type": "application/json" } : {},
    body: body ? JSON.stringify(body) : undefined,
  });
  assert.equal(res.status, 200);
  const loc = res.headers.get("content-location") ?? "";
  const reader = res.body.getReader();
  if (body?.stream_mode || method === "GET") await reader.read(); // the first event at least
  ac.abort();
  await reader.cancel().catch(() => {});
  return loc.split("/").pop();
}

for (const [route, extra] of [["stream", { stream_mode: ["values"] }], ["wait", {}]]) {
  test(`runs/${route} with on_disconnect "cancel": leaving cancels the run; "continue" does not`, async () => {
    const t = await client.threads.create();
    const body = { assistant_id: "counter", ...longCounter(), ...extra };
    const rid = await leaveEarly(`/threads/${t.thread_id}/runs/${route}`, { ...body, on_disconnect: "cancel" });
    assert.match(rid, /^[0-9a-f-]{36}$/, "Content-Location names the run");
    await waitFor("the run to be interrupted", async () => (await runStatus(t.thread_id, rid)) === "interrupted");
    const th = await client.threads.get(t.thread_id);
    assert.equal(th.status, "idle");

    const rid2 = await leaveEarly(`/threads/${t.thread_id}/runs/${route}`, body);
    await new Promise((r) => setTimeout(r, 300));
    assert.notEqual(await runStatus(t.thread_id, rid2), "interrupted", "continue: the run goes on");
    await cancelQuietly(t.thread_id, rid2);
  });
}

test("join-stream with ?cancel_on_disconnect=true: leaving cancels the run", async () => {
  const t = await client.threads.create();
  const run = await startLongRun(t.thread_id);
  try {
    await leaveEarly(`/threads/${t.thread_id}/runs/${run.run_id}/stream?cancel_on_disconnect=true`, null, { method: "GET" });
    await waitFor("the run to be interrupted", async () => (await runStatus(t.thread_id, run.run_id)) === "interrupted");
  } finally {
    await cancelQuietly(t.thread_id, run.run_id);
  }
});
