// interrupt() through runs.wait and resume with a Command; static interrupts
// (interrupt_before / interrupt_after) (observed/08_interrupt_resume.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ASSISTANT, INTERRUPT_ID_RE, client, collect, pairs } from "./_lib.mjs";

test("approval via runs.wait: {__interrupt__: [{id, value}]}, thread interrupted, state.tasks[0].interrupts, resume", async () => {
  const t = await client.threads.create();
  const out = await client.runs.wait(t.thread_id, "approval", { input: { topic: "deploy" } });
  assert.deepEqual(Object.keys(out), ["__interrupt__"], "only the interrupts, not the state");
  assert.equal(out.__interrupt__.length, 1);
  const intr = out.__interrupt__[0];
  assert.deepEqual(Object.keys(intr).sort(), ["id", "value"]);
  assert.match(intr.id, INTERRUPT_ID_RE);
  assert.deepEqual(intr.value, { question: "ok?" });

  const th = await client.threads.get(t.thread_id);
  assert.equal(th.status, "interrupted");
  assert.deepEqual(th.values, { topic: "deploy" });
  assert.deepEqual(th.metadata, { graph_id: "approval", assistant_id: ASSISTANT.approval });

  const st = await client.threads.getState(t.thread_id);
  assert.deepEqual(st.values, { topic: "deploy" });
  assert.deepEqual(st.next, ["ask"]);
  assert.equal(st.tasks.length, 1);
  const task = st.tasks[0];
  assert.equal(task.name, "ask");
  assert.deepEqual(task.interrupts, [intr]);
  assert.equal(task.error, null);
  assert.deepEqual(th.interrupts, { [task.id]: [intr] }, "thread.interrupts maps the task id to its interrupts");

  const done = await client.runs.wait(t.thread_id, "approval", { command: { resume: true } });
  assert.deepEqual(done, { topic: "deploy", approved: true });
  const th2 = await client.threads.get(t.thread_id);
  assert.equal(th2.status, "idle");
  assert.deepEqual(th2.values, { topic: "deploy", approved: true });
  assert.deepEqual(th2.interrupts, {});
  const st2 = await client.threads.getState(t.thread_id);
  assert.deepEqual(st2.next, []);
  assert.deepEqual(st2.tasks, []);
  assert.equal(st2.metadata.step, 1);
});

test("resume values of any JSON type reach the node", async () => {
  const t = await client.threads.create();
  await client.runs.wait(t.thread_id, "approval", { input: { topic: "obj" } });
  const v = { ok: [1, "two", null], n: 1.5 };
  assert.deepEqual(await client.runs.wait(t.thread_id, "approval", { command: { resume: v } }), { topic: "obj", approved: v });
});

test("a second interrupt on the same thread gets a fresh interrupt", async () => {
  const t = await client.threads.create();
  const a = await client.runs.wait(t.thread_id, "approval", { input: { topic: "1" } });
  await client.runs.wait(t.thread_id, "approval", { command: { resume: "no" } });
  const b = await client.runs.wait(t.thread_id, "approval", { input: { topic: "2" } });
  assert.deepEqual(b.__interrupt__.map((x) => x.value), [{ question: "ok?" }]);
  assert.match(b.__interrupt__[0].id, INTERRUPT_ID_RE);
  assert.equal(a.__interrupt__.length, 1);
  assert.deepEqual(await client.runs.wait(t.thread_id, "approval", { command: { resume: "yes" } }), { topic: "2", approved: "yes" });
});

test("interruptBefore [b]: runs.wait gives {__interrupt__: []}, the thread waits before b; input null continues", async () => {
  const t = await client.threads.create();
  const out = await client.runs.wait(t.thread_id, "chain", { input: { items: ["s"] }, interruptBefore: ["b"] });
  assert.deepEqual(out, { __interrupt__: [] });
  const th = await client.threads.get(t.thread_id);
  assert.equal(th.status, "interrupted");
  const st = await client.threads.getState(t.thread_id);
  assert.deepEqual(st.values, { items: ["s", "a"] });
  assert.deepEqual(st.next, ["b"]);
  assert.deepEqual(st.tasks.map((x) => [x.name, x.interrupts]), [["b", []]]);
  assert.deepEqual(await client.runs.wait(t.thread_id, "chain", { input: null }), { items: ["s", "a", "b", "c"] });
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

test("interruptAfter [a] through the stream: updates and values {__interrupt__: []}", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "chain", {
    input: { items: ["s"] }, interruptAfter: ["a"], streamMode: ["values", "updates"],
  }));
  assert.deepEqual(pairs(chunks), [
    ["values", { items: ["s"] }],
    ["updates", { a: { items: ["a"] } }],
    ["values", { items: ["s", "a"] }],
    ["updates", { __interrupt__: [] }],
    ["values", { __interrupt__: [] }],
  ]);
  assert.equal((await client.threads.get(t.thread_id)).status, "interrupted");
  const st = await client.threads.getState(t.thread_id);
  assert.deepEqual(st.values, { items: ["s", "a"] });
  assert.deepEqual(st.next, ["b"]);
  assert.deepEqual(await client.runs.wait(t.thread_id, "chain", { input: null }), { items: ["s", "a", "b", "c"] });
});
