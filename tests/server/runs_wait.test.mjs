// POST /threads/{id}/runs/wait and stateless POST /runs/wait
// (observed/04_runs_wait_chain.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, UUID_RE, client, raw } from "./_lib.mjs";

test("runs.wait on a thread returns the final values of chain", async () => {
  const t = await client.threads.create();
  let created;
  const out = await client.runs.wait(t.thread_id, "chain", {
    input: { items: ["start"] },
    onRunCreated: (m) => { created = m; },
  });
  assert.deepEqual(out, { items: ["start", "a", "b", "c"] });
  // onRunCreated comes from the Content-Location header.
  assert.equal(created?.thread_id, t.thread_id);
  assert.match(created?.run_id ?? "", UUID_RE);
  const run = await client.runs.get(t.thread_id, created.run_id);
  assert.equal(run.status, "success");
  assert.equal(run.assistant_id, ASSISTANT.chain, "run.assistant_id is the uuid even when the graph id was given");
  const th = await client.threads.get(t.thread_id);
  assert.deepEqual(th.values, { items: ["start", "a", "b", "c"] });
  assert.equal(th.status, "idle");
});

test("runs.wait on a thread accumulates across runs", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "chain", { input: { items: ["1"] } });
  const out = await client.runs.wait(t.thread_id, "chain", { input: { items: ["2"] } });
  assert.deepEqual(out, { items: ["1", "a", "b", "c", "2", "a", "b", "c"] });
});

test("stateless runs.wait (thread null) returns the final values", async () => {
  let created;
  const out = await client.runs.wait(null, "chain", { input: { items: [] }, onRunCreated: (m) => { created = m; } });
  assert.deepEqual(out, { items: ["a", "b", "c"] });
  assert.match(created?.run_id ?? "", UUID_RE);
  assert.equal(created?.thread_id, undefined, "stateless Content-Location is /runs/{run_id}");
  assert.deepEqual(await client.runs.wait(null, ASSISTANT.fanout, { input: { n: 4 } }), { n: 4, results: [0, 1, 2, 3] });
  assert.deepEqual(await client.runs.wait(null, "counter", { input: { n: 5 } }), { n: 5, count: 5 });
});

test("raw POST /threads/{id}/runs/wait: 200, JSON body, Content-Location of the run", async () => {
  const t = await client.threads.create();
  const r = await raw(`/threads/${t.thread_id}/runs/wait`, { method: "POST", json: { assistant_id: "chain", input: { items: ["start"] } } });
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.text), { items: ["start", "a", "b", "c"] }, "body is the JSON of the final values (whitespace allowed)");
  const loc = r.headers.get("content-location") ?? "";
  const m = new RegExp(`^/threads/${t.thread_id}/runs/([0-9a-f-]{36})$`).exec(loc);
  assert.ok(m, `content-location ${JSON.stringify(loc)} is /threads/{thread_id}/runs/{run_id}`);
  assert.equal((await client.runs.get(t.thread_id, m[1])).status, "success");
  // One response of known length once the run has ended (issue 37: a chunked answer sent its
  // headers, its body and its last chunk apart, two sends more per run).
  assert.equal(r.headers.get("transfer-encoding"), null, "not chunked");
  assert.equal(r.headers.get("content-length"), String(Buffer.byteLength(r.text)));
});

test("raw POST /runs/wait (stateless): 200 and Content-Location /runs/{run_id}", async () => {
  const r = await raw(`/runs/wait`, { method: "POST", json: { assistant_id: "chain", input: { items: ["x"] } } });
  assert.equal(r.status, 200);
  assert.deepEqual(JSON.parse(r.text), { items: ["x", "a", "b", "c"] });
  assert.match(r.headers.get("content-location") ?? "", /^\/runs\/[0-9a-f-]{36}$/);
});

test("runs.wait with config.recursion_limit lets counter loop past 25 steps", async () => {
  const out = await client.runs.wait(null, "counter", { input: { n: 40 }, config: { recursion_limit: 50 } });
  assert.deepEqual(out, { n: 40, count: 40 });
});

test("durability: 'async' (the default) keeps a checkpoint per superstep, 'exit' only the last", async (t) => {
  if (process.env.SST_PEER) return t.skip("durability is checked on superstep only");
  const a = await client.threads.create();
  assert.deepEqual(await client.runs.wait(a.thread_id, "chain", { input: { items: ["s"] } }),
    { items: ["s", "a", "b", "c"] });
  const e = await client.threads.create();
  assert.deepEqual(await client.runs.wait(e.thread_id, "chain", { input: { items: ["s"] }, durability: "exit" }),
    { items: ["s", "a", "b", "c"] });
  const ha = await client.threads.getHistory(a.thread_id, { limit: 100 });
  const he = await client.threads.getHistory(e.thread_id, { limit: 100 });
  assert.equal(ha.length, 5, "input + one per node");
  assert.ok(he.length < ha.length, `exit wrote ${he.length} checkpoints`);
  assert.deepEqual(he[0].values, { items: ["s", "a", "b", "c"] }, "the final state is kept");
  const bad = await raw(`/threads/${e.thread_id}/runs/wait`, { method: "POST", json: { assistant_id: "chain", durability: "never" } });
  assert.equal(bad.status, 400);
  assert.match(bad.text, /durability/);
});
