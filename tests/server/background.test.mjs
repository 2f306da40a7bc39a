// Background runs: POST /threads/{id}/runs, GET .../runs/{run}/join,
// GET .../runs/{run}, GET /threads/{id}/runs, GET .../runs/{run}/stream
// (joinStream, Last-Event-ID), DELETE .../runs/{run}, after_seconds, webhook
// (observed/06_runs_create_join.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import {
  ASSISTANT, ISO_RE, UUID_RE, client, collect, oursOnly, pairs, randomUUID, rejects, sleep, waitFor,
} from "./_lib.mjs";

const RUN_KEYS = ["assistant_id", "created_at", "kwargs", "metadata", "multitask_strategy", "run_id", "status",
  "thread_id", "updated_at"];

test("runs.create returns a pending run; join gives the final values; get shows success", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "chain", { input: { items: ["bg"] } });
  for (const k of RUN_KEYS) assert.ok(k in run, `run has ${k}`);
  assert.match(run.run_id, UUID_RE);
  assert.equal(run.thread_id, t.thread_id);
  assert.equal(run.assistant_id, ASSISTANT.chain);
  assert.equal(run.status, "pending");
  assert.equal(run.multitask_strategy, "reject");
  assert.deepEqual(run.kwargs.input, { items: ["bg"] });
  assert.match(run.created_at, ISO_RE);

  assert.deepEqual(await client.runs.join(t.thread_id, run.run_id), { items: ["bg", "a", "b", "c"] });
  const got = await client.runs.get(t.thread_id, run.run_id);
  assert.equal(got.status, "success");
  assert.equal(got.run_id, run.run_id);
  assert.equal(got.created_at, run.created_at);
  assert.deepEqual(got.kwargs.input, { items: ["bg"] });
  // A second join of a finished run gives the same values.
  assert.deepEqual(await client.runs.join(t.thread_id, run.run_id), { items: ["bg", "a", "b", "c"] });
});

test("runs.create with metadata and a config keeps them on the run", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "counter", {
    input: { n: 30 }, metadata: { who: "test" }, config: { recursion_limit: 40 },
  });
  assert.equal(run.metadata.who, "test");
  assert.deepEqual(await client.runs.join(t.thread_id, run.run_id), { n: 30, count: 30 });
  assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "success");
});

test("runs.list: oldest first, limit; status filter", async () => {
  const t = await client.threads.create();
  const ids = [];
  for (const x of ["1", "2", "3"]) {
    const r = await client.runs.create(t.thread_id, "chain", { input: { items: [x] } });
    await client.runs.join(t.thread_id, r.run_id);
    ids.push(r.run_id);
    await sleep(5);
  }
  const list = await client.runs.list(t.thread_id);
  // LangGraph.js lists a thread's runs in creation order (oldest first).
  assert.deepEqual(list.map((r) => r.run_id), ids);
  assert.ok(list.every((r) => r.status === "success" && r.thread_id === t.thread_id));
  assert.deepEqual((await client.runs.list(t.thread_id, { limit: 2 })).map((r) => r.run_id), ids.slice(0, 2));
  assert.equal((await client.runs.list(t.thread_id, { status: "success" })).length, 3);
  assert.deepEqual(await client.runs.list(t.thread_id, { status: "error" }), []);
  const missing = randomUUID();
  await rejects(client.runs.list(missing), 404, [missing]);
});

test("runs.list: offset skips runs (limit 2 offset 1 = the 2nd and 3rd)",
  { skip: oursOnly("LangGraph.js slices [offset, limit), so limit=1&offset=1 is empty") }, async () => {
    const t = await client.threads.create();
    const ids = [];
    for (const x of ["1", "2", "3"]) {
      const r = await client.runs.create(t.thread_id, "chain", { input: { items: [x] } });
      await client.runs.join(t.thread_id, r.run_id);
      ids.push(r.run_id);
    }
    assert.deepEqual((await client.runs.list(t.thread_id, { limit: 2, offset: 1 })).map((r) => r.run_id), ids.slice(1, 3));
    assert.deepEqual((await client.runs.list(t.thread_id, { limit: 1, offset: 1 })).map((r) => r.run_id), [ids[1]]);
    assert.deepEqual(await client.runs.list(t.thread_id, { offset: 3 }), []);
  });

test("runs.delete of a finished run: 204, then get is 404 and list omits it", async () => {
  const t = await client.threads.create();
  const r1 = await client.runs.create(t.thread_id, "chain", { input: { items: [] } });
  await client.runs.join(t.thread_id, r1.run_id);
  const r2 = await client.runs.create(t.thread_id, "chain", { input: { items: [] } });
  await client.runs.join(t.thread_id, r2.run_id);
  assert.equal(await client.runs.delete(t.thread_id, r1.run_id), undefined);
  await rejects(client.runs.get(t.thread_id, r1.run_id), 404, [r1.run_id]);
  assert.deepEqual((await client.runs.list(t.thread_id)).map((r) => r.run_id), [r2.run_id]);
  await rejects(client.runs.delete(t.thread_id, r1.run_id), 404, [r1.run_id]);
  // The thread's state is not touched.
  assert.deepEqual((await client.threads.getState(t.thread_id)).values, { items: ["a", "b", "c", "a", "b", "c"] });
});

test("runs.joinStream of a running run: its later events live, until the run ends", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "counter", { input: { n: 6, delay_ms: 150 }, streamMode: ["updates"] });
  await waitFor("run running", async () => (await client.runs.get(t.thread_id, run.run_id)).status === "running", 5000, 20);
  const chunks = await collect(client.runs.joinStream(t.thread_id, run.run_id));
  const body = chunks[0]?.event === "metadata" ? chunks.slice(1) : chunks;
  if (chunks[0]?.event === "metadata") assert.deepEqual(chunks[0].data, { run_id: run.run_id, attempt: 1 });
  assert.ok(body.length >= 1 && body.length <= 6, `1..6 updates, got ${body.length}`);
  assert.ok(body.every((c) => c.event === "updates" && JSON.stringify(c.data) === '{"inc":{"count":1}}'), JSON.stringify(body));
  const ids = chunks.map((c) => Number(c.id));
  assert.ok(ids.every((x, i) => Number.isInteger(x) && (i === 0 || x === ids[i - 1] + 1)), `consecutive ids: ${ids}`);
  assert.equal(ids[ids.length - 1], 6, "the last update is event 6 (metadata is 0)");
  // The stream closed because the run ended.
  assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "success");
  assert.deepEqual((await client.threads.getState(t.thread_id)).values, { n: 6, delay_ms: 150, count: 6 });
});

test("runs.joinStream with lastEventId on a resumable run: -1 replays all, n resumes after event n", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "counter", {
    input: { n: 4, delay_ms: 50 }, streamMode: ["updates"], streamResumable: true,
  });
  // Poll (a join would, on LangGraph.js, consume the stored events: see the next test).
  await waitFor("run success", async () => (await client.runs.get(t.thread_id, run.run_id)).status === "success", 10000);
  const all = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
  assert.deepEqual(all.map((c) => c.id), ["0", "1", "2", "3", "4"]);
  assert.deepEqual(all[0], { event: "metadata", data: { run_id: run.run_id, attempt: 1 }, id: "0" });
  assert.deepEqual(pairs(all), Array(4).fill(["updates", { inc: { count: 1 } }]));
  const rest = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "2" }));
  assert.deepEqual(rest.map((c) => [c.id, c.event]), [["3", "updates"], ["4", "updates"]]);
});

test("a resumable run read first by join can still be replayed with lastEventId -1",
  { skip: oursOnly("on LangGraph.js a join consumes the run's stored events: the replay is empty") }, async () => {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "chain", {
      input: { items: [] }, streamMode: ["updates"], streamResumable: true,
    });
    await client.runs.join(t.thread_id, run.run_id);
    const all = await collect(client.runs.joinStream(t.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.deepEqual(all.map((c) => c.id), ["0", "1", "2", "3"]);
    assert.deepEqual(pairs(all), [
      ["updates", { a: { items: ["a"] } }], ["updates", { b: { items: ["b"] } }], ["updates", { c: { items: ["c"] } }],
    ]);
  });

test("runs.stream with streamResumable: the stream can be replayed afterwards", async () => {
  const t = await client.threads.create();
  let runId;
  const live = await collect(client.runs.stream(t.thread_id, "chain", {
    input: { items: [] }, streamMode: ["updates"], streamResumable: true, onRunCreated: (m) => { runId = m.run_id; },
  }));
  const again = await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: "-1" }));
  assert.deepEqual(again, live);
  const tail = await collect(client.runs.joinStream(t.thread_id, runId, { lastEventId: "1" }));
  assert.deepEqual(tail, live.slice(2));
});

test("after_seconds: the run stays pending, then runs", async () => {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "chain", { input: { items: [] }, afterSeconds: 2 });
  assert.equal(run.status, "pending");
  assert.deepEqual(await client.runs.join(t.thread_id, run.run_id), { items: ["a", "b", "c"] });
  // By the server's clock: its first checkpoint came 2 s after the run was made, at least.
  const history = await client.threads.getHistory(t.thread_id, { limit: 100 });
  const waited = Date.parse(history[history.length - 1].created_at) - Date.parse(run.created_at);
  assert.ok(waited >= 1900, `the run waited 2 s before it started (${waited} ms)`);
  assert.equal((await client.runs.get(t.thread_id, run.run_id)).status, "success");
});

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

test("webhook: a POST with the run, its status and values when the run ends", async () => {
  const hook = await hookServer();
  try {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "chain", { input: { items: ["w"] }, webhook: `${hook.url}/hook?x=1` });
    await client.runs.join(t.thread_id, run.run_id);
    await waitFor("the webhook POST", () => hook.got.length > 0, 10000);
    await sleep(200);
    assert.equal(hook.got.length, 1, "one POST per run");
    const [h] = hook.got;
    assert.equal(h.method, "POST");
    assert.equal(h.url, "/hook?x=1", "the URL is called as given, query included");
    const body = JSON.parse(h.body);
    assert.equal(body.run_id, run.run_id);
    assert.equal(body.thread_id, t.thread_id);
    assert.equal(body.assistant_id, ASSISTANT.chain);
    assert.equal(body.status, "success");
    assert.deepEqual(body.values, { items: ["w", "a", "b", "c"] });
  } finally {
    await hook.close();
  }
});

test("webhook of a failed run: status error", async () => {
  const hook = await hookServer();
  try {
    const t = await client.threads.create();
    const run = await client.runs.create(t.thread_id, "counter", { input: { n: 100 }, webhook: `${hook.url}/fail` });
    await waitFor("the webhook POST", () => hook.got.length > 0, 10000);
    const body = JSON.parse(hook.got[0].body);
    assert.equal(hook.got[0].url, "/fail");
    assert.equal(body.run_id, run.run_id);
    assert.equal(body.status, "error");
  } finally {
    await hook.close();
  }
});

test("runs.createBatch: the SDK's payloads (assistantId and its camelCase members) make one stateless background run each", async () => {
  const runs = await client.runs.createBatch([
    { assistantId: "chain", input: { items: ["x"] }, metadata: { batch: 1 } },
    { assistantId: ASSISTANT.counter, input: { n: 2 }, metadata: { batch: 2 }, streamMode: ["updates"] },
  ]);
  assert.equal(runs.length, 2);
  assert.deepEqual(runs.map((r) => r.assistant_id), [ASSISTANT.chain, ASSISTANT.counter]);
  assert.deepEqual(runs.map((r) => r.metadata.batch), [1, 2]);
  for (const r of runs) {
    assert.match(r.run_id, UUID_RE);
    assert.ok(["pending", "running", "success"].includes(r.status), `status ${r.status}`);
  }
  assert.notEqual(runs[0].run_id, runs[1].run_id);
  assert.deepEqual(runs[0].kwargs.input, { items: ["x"] });
  assert.deepEqual(runs[1].kwargs.input, { n: 2 });
});

test("runs.createBatch: streamMode is read as stream_mode (LangGraph.js drops the SDK's camelCase members)",
  { skip: oursOnly("LangGraph.js's server drops members it does not know, so streamMode is lost there") }, async () => {
    const [run] = await client.runs.createBatch([{ assistantId: "counter", input: { n: 1 }, streamMode: ["updates", "custom"] }]);
    assert.deepEqual(run.kwargs.stream_mode, ["updates", "custom"]);
  });

test("runs.createBatch: a bad item refuses the batch (400 naming the item's member); an empty batch too", async () => {
  await rejects(client.runs.createBatch([
    { assistantId: "chain", input: { items: [] } },
    { assistantId: "chain", input: { items: [] }, multitaskStrategy: "sometimes" },
  ]), 400, ["multitask_strategy", "item 1"]);
  await rejects(client.runs.createBatch([{ assistantId: "nope", input: {} }]), 404, ["nope"]);
  await rejects(client.runs.createBatch([]), [400, 422]);
});
