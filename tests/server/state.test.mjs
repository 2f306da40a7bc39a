// GET /threads/{id}/state[/{checkpoint_id}], POST /threads/{id}/history,
// POST /threads/{id}/state (update_state), runs from a checkpoint (replay and
// fork), Command goto / update / resume map (observed/07_threads_state_history.json,
// 09_update_state.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, client, collect, oursOnly, pairs, randomUUID, rejects, startLongRun, cancelQuietly } from "./_lib.mjs";

async function chainThread(first = "start") {
  const t = await client.threads.create();
  const run = await client.runs.create(t.thread_id, "chain", { input: { items: [first] } });
  await client.runs.join(t.thread_id, run.run_id);
  return { threadId: t.thread_id, runId: run.run_id };
}

function checkCheckpoint(c, threadId) {
  assert.equal(c.thread_id, threadId);
  assert.equal(c.checkpoint_ns, "");
  assert.ok(typeof c.checkpoint_id === "string" && c.checkpoint_id.length > 0, "checkpoint_id");
}

test("getState: values, next, tasks, metadata, created_at, checkpoint, parent_checkpoint", async () => {
  const { threadId, runId } = await chainThread();
  const s = await client.threads.getState(threadId);
  for (const k of ["values", "next", "tasks", "metadata", "created_at", "checkpoint", "parent_checkpoint"]) assert.ok(k in s, k);
  assert.deepEqual(s.values, { items: ["start", "a", "b", "c"] });
  assert.deepEqual(s.next, []);
  assert.deepEqual(s.tasks, []);
  assert.equal(s.metadata.source, "loop");
  assert.equal(s.metadata.step, 3);
  assert.equal(s.metadata.graph_id, "chain");
  assert.equal(s.metadata.assistant_id, ASSISTANT.chain);
  assert.equal(s.metadata.run_id, runId);
  checkCheckpoint(s.checkpoint, threadId);
  checkCheckpoint(s.parent_checkpoint, threadId);
  assert.notEqual(s.parent_checkpoint.checkpoint_id, s.checkpoint.checkpoint_id);
});

test("getState of a thread without runs: empty values, no checkpoint", async () => {
  const t = await client.threads.create();
  const s = await client.threads.getState(t.thread_id);
  assert.deepEqual(s.values, {});
  assert.deepEqual(s.next, []);
  assert.deepEqual(s.tasks, []);
  assert.equal(s.checkpoint, null);
  assert.deepEqual(await client.threads.getHistory(t.thread_id), []);
});

test("getHistory: every checkpoint newest first, linked by parent_checkpoint, with the tasks' results", async () => {
  const { threadId } = await chainThread();
  const h = await client.threads.getHistory(threadId);
  assert.equal(h.length, 5);
  assert.deepEqual(h.map((s) => s.values.items), [["start", "a", "b", "c"], ["start", "a", "b"], ["start", "a"], ["start"], []]);
  assert.deepEqual(h.map((s) => s.next), [[], ["c"], ["b"], ["a"], ["__start__"]]);
  assert.deepEqual(h.map((s) => s.metadata.step), [3, 2, 1, 0, -1]);
  assert.deepEqual(h.map((s) => s.metadata.source), ["loop", "loop", "loop", "loop", "input"]);
  h.forEach((s, i) => {
    checkCheckpoint(s.checkpoint, threadId);
    if (i < h.length - 1) assert.equal(s.parent_checkpoint.checkpoint_id, h[i + 1].checkpoint.checkpoint_id, `parent of ${i}`);
    else assert.equal(s.parent_checkpoint, null);
  });
  // Each older checkpoint's task shows what it wrote.
  assert.deepEqual(h.map((s) => s.tasks.map((t) => [t.name, t.result])), [
    [], [["c", { items: ["c"] }]], [["b", { items: ["b"] }]], [["a", { items: ["a"] }]], [["__start__", { items: ["start"] }]],
  ]);
  for (const s of h.slice(1)) {
    assert.equal(s.tasks[0].error, null);
    assert.deepEqual(s.tasks[0].interrupts, []);
  }
  assert.deepEqual(h[0], await client.threads.getState(threadId), "history[0] is the current state");
});

test("getHistory: limit, before (a checkpoint id), metadata filter", async () => {
  const { threadId } = await chainThread();
  const h = await client.threads.getHistory(threadId);
  const steps = (list) => list.map((s) => s.metadata.step);
  assert.deepEqual(steps(await client.threads.getHistory(threadId, { limit: 2 })), [3, 2]);
  assert.deepEqual(steps(await client.threads.getHistory(threadId, { before: h[1].checkpoint.checkpoint_id })), [1, 0, -1]);
  assert.deepEqual(steps(await client.threads.getHistory(threadId, { before: h[1].checkpoint.checkpoint_id, limit: 1 })), [1]);
  // The SDK's type for `before` is a Config: {configurable: {checkpoint_id}}.
  const config = { configurable: { thread_id: threadId, checkpoint_id: h[1].checkpoint.checkpoint_id } };
  assert.deepEqual(steps(await client.threads.getHistory(threadId, { before: config, limit: 2 })), [1, 0]);
  assert.deepEqual(steps(await client.threads.getHistory(threadId, { metadata: { source: "input" } })), [-1]);
  assert.deepEqual(steps(await client.threads.getHistory(threadId, { metadata: { step: 1 } })), [1]);
  assert.deepEqual(await client.threads.getHistory(threadId, { metadata: { source: "nope" } }), []);
  const missing = randomUUID();
  await rejects(client.threads.getHistory(missing), 404, [missing]);
});

test("getState(threadId, checkpointId) reads an older checkpoint", async () => {
  const { threadId } = await chainThread();
  const h = await client.threads.getHistory(threadId);
  const old = h[3]; // step 0: [start], next [a]
  const s = await client.threads.getState(threadId, old.checkpoint.checkpoint_id);
  assert.deepEqual(s.values, { items: ["start"] });
  assert.deepEqual(s.next, ["a"]);
  assert.equal(s.metadata.step, 0);
  assert.equal(s.checkpoint.checkpoint_id, old.checkpoint.checkpoint_id);
  assert.equal(s.parent_checkpoint.checkpoint_id, h[4].checkpoint.checkpoint_id);
  assert.deepEqual(s.tasks.map((t) => t.name), ["a"]);
  // The POST /state/checkpoint form ({checkpoint_id}) too.
  const s2 = await client.threads.getState(threadId, { checkpoint_id: old.checkpoint.checkpoint_id });
  assert.deepEqual(s2.values, { items: ["start"] });
});

test("updateState with asNode: {checkpoint: {...}}, a new head with source update", async () => {
  const { threadId } = await chainThread();
  const before = await client.threads.getState(threadId);
  const r = await client.threads.updateState(threadId, { values: { items: ["manual"] }, asNode: "c" });
  assert.deepEqual(Object.keys(r), ["checkpoint"]);
  assert.deepEqual(Object.keys(r.checkpoint).sort(), ["checkpoint_id", "checkpoint_ns", "thread_id"]);
  checkCheckpoint(r.checkpoint, threadId);
  const s = await client.threads.getState(threadId);
  assert.deepEqual(s.values, { items: ["start", "a", "b", "c", "manual"] }, "the value goes through the reducer");
  assert.deepEqual(s.next, [], "as c: c's edge leads to END");
  assert.equal(s.metadata.source, "update");
  assert.equal(s.metadata.step, 4);
  assert.equal(s.checkpoint.checkpoint_id, r.checkpoint.checkpoint_id);
  assert.equal(s.parent_checkpoint.checkpoint_id, before.checkpoint.checkpoint_id);
});

test("updateState as an earlier node sets next; a run with no input continues from there", async () => {
  const { threadId } = await chainThread("s");
  await client.threads.updateState(threadId, { values: { items: ["m"] }, asNode: "a" });
  const s = await client.threads.getState(threadId);
  assert.deepEqual(s.values, { items: ["s", "a", "b", "c", "m"] });
  assert.deepEqual(s.next, ["b"]);
  assert.deepEqual(await client.runs.wait(threadId, "chain", { input: null }), { items: ["s", "a", "b", "c", "m", "b", "c"] });
});

test("updateState without asNode (the last node to write) and on an older checkpoint", async () => {
  const { threadId } = await chainThread();
  const r = await client.threads.updateState(threadId, { values: { items: ["no-as-node"] } });
  checkCheckpoint(r.checkpoint, threadId);
  const s = await client.threads.getState(threadId);
  assert.deepEqual(s.values, { items: ["start", "a", "b", "c", "no-as-node"] });
  assert.equal(s.metadata.source, "update");
  // On an older checkpoint: a branch from it.
  const h = await client.threads.getHistory(threadId, { limit: 10 });
  const old = h.find((x) => x.metadata.step === 1 && x.metadata.source === "loop"); // [start, a], next [b]
  const r2 = await client.threads.updateState(threadId, { values: { items: ["old"] }, checkpointId: old.checkpoint.checkpoint_id, asNode: "a" });
  const s2 = await client.threads.getState(threadId, r2.checkpoint.checkpoint_id);
  assert.deepEqual(s2.values, { items: ["start", "a", "old"] });
  assert.deepEqual(s2.next, ["b"]);
  assert.equal(s2.parent_checkpoint.checkpoint_id, old.checkpoint.checkpoint_id);
});

test("updateState on a busy thread is 409", async () => {
  const t = await client.threads.create();
  const run = await startLongRun(t.thread_id);
  try {
    await rejects(client.threads.updateState(t.thread_id, { values: { count: 1 } }), 409, [/busy/i]);
  } finally {
    await cancelQuietly(t.thread_id, run.run_id);
  }
});

test("updateState with an unknown asNode is refused",
  { skip: oursOnly("LangGraph.js answers 500 Internal Server Error") }, async () => {
    const { threadId } = await chainThread();
    await rejects(client.threads.updateState(threadId, { values: { items: ["x"] }, asNode: "nope" }), [400, 404, 422], ["nope"]);
  });

test("a run with checkpointId and no input replays from that checkpoint (a fork copy, then the later nodes)", async () => {
  const { threadId } = await chainThread("s");
  const h = await client.threads.getHistory(threadId);
  const ck = h.find((x) => x.metadata.step === 1).checkpoint.checkpoint_id; // [s, a], next [b]
  const chunks = await collect(client.runs.stream(threadId, "chain", { input: null, checkpointId: ck, streamMode: ["updates", "values"] }));
  assert.deepEqual(pairs(chunks), [
    ["values", { items: ["s", "a"] }],
    ["updates", { b: { items: ["b"] } }],
    ["values", { items: ["s", "a", "b"] }],
    ["updates", { c: { items: ["c"] } }],
    ["values", { items: ["s", "a", "b", "c"] }],
  ]);
  const h2 = await client.threads.getHistory(threadId, { limit: 20 });
  assert.equal(h2.length, h.length + 3, "a fork copy and two new checkpoints");
  assert.deepEqual(h2[0].values, { items: ["s", "a", "b", "c"] });
  const fork = h2.find((x) => x.metadata.source === "fork");
  assert.ok(fork, "a checkpoint with source fork");
  assert.deepEqual(fork.values, { items: ["s", "a"] });
  assert.deepEqual(fork.next, ["b"]);
  assert.equal(fork.parent_checkpoint.checkpoint_id, ck, "the fork is a child of the checkpoint");
});

test("after a run from a checkpoint, the next run continues from the thread's head",
  { skip: oursOnly("LangGraph.js keeps checkpoint_id in the thread's config and restarts every later run from it") }, async () => {
    const { threadId } = await chainThread("s");
    const h = await client.threads.getHistory(threadId);
    const ck = h.find((x) => x.metadata.step === 1).checkpoint.checkpoint_id;
    assert.deepEqual(await client.runs.wait(threadId, "chain", { input: null, checkpointId: ck }), { items: ["s", "a", "b", "c"] });
    assert.deepEqual(await client.runs.wait(threadId, "chain", { input: { items: ["z"] } }),
      { items: ["s", "a", "b", "c", "z", "a", "b", "c"] });
  });

test("a run with checkpointId and new input forks: the pending tasks are dropped, the graph starts again", async () => {
  const { threadId } = await chainThread("s");
  const h = await client.threads.getHistory(threadId);
  const ck = h.find((x) => x.metadata.step === 1).checkpoint.checkpoint_id; // [s, a], next [b]
  assert.deepEqual(await client.runs.wait(threadId, "chain", { input: { items: ["n"] }, checkpointId: ck }),
    { items: ["s", "a", "n", "a", "b", "c"] });
});

test("command {goto}: only the target runs", async () => {
  const t = await client.threads.create();
  assert.deepEqual(await client.runs.wait(t.thread_id, "chain", { command: { goto: "c" } }), { items: ["c"] });
});

test("command {update, goto}: the update is applied, then the target runs", async () => {
  const t = await client.threads.create();
  assert.deepEqual(await client.runs.wait(t.thread_id, "chain", { command: { update: { items: ["u"] }, goto: "b" } }),
    { items: ["u", "b", "c"] });
});

test("command {resume: {<interrupt id>: value}} resumes that interrupt", async () => {
  const t = await client.threads.create();
  const first = await client.runs.wait(t.thread_id, "approval", { input: { topic: "x" } });
  const id = first.__interrupt__[0].id;
  assert.deepEqual(await client.runs.wait(t.thread_id, "approval", { command: { resume: { [id]: "mapped" } } }),
    { topic: "x", approved: "mapped" });
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

test("state and history of an unknown thread are 404", async () => {
  const id = randomUUID();
  await rejects(client.threads.getState(id), 404, [id]);
  await rejects(client.threads.updateState(id, { values: { items: [] } }), 404, [id]);
});
