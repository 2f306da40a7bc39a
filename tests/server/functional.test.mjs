// A functional workflow (superstep.entrypoint with tasks, graphs/workflow.lua)
// through LangGraph's SDK: any JSON value in, the bare value out (as
// LangGraph's server answers for an @entrypoint), the tasks' updates
// streamed before the entrypoint's, an interrupt inside a task answered
// with a Command, and the state's values.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ON_PEER, client, collect, pairs, raw } from "./_lib.mjs";

const skip = ON_PEER ? "superstep's own test graph" : false;

test("a value in, the value out: runs/wait, thread values and state", { skip }, async () => {
  const t = await client.threads.create();
  // (the SDK's runs.wait looks for "__error__" in an object result: a number is sent raw)
  const r = await raw(`/threads/${t.thread_id}/runs/wait`, {
    method: "POST", json: { assistant_id: "workflow", input: 21 },
  });
  assert.equal(r.status, 200);
  assert.equal(r.json, 42);
  const th = await client.threads.get(t.thread_id);
  assert.equal(th.values, 42);
  const st = await client.threads.getState(t.thread_id);
  assert.equal(st.values, 42);
  assert.deepEqual(st.next, []);
});

test("stream: each task's update, then the entrypoint's; values is the result", { skip }, async () => {
  const t = await client.threads.create();
  const chunks = pairs(await collect(client.runs.stream(t.thread_id, "workflow", {
    input: 4, streamMode: ["updates", "values"],
  })));
  assert.deepEqual(chunks, [["updates", { double: 8 }], ["updates", { workflow: 8 }], ["values", 8]]);
});

test("an interrupt inside a task: {__interrupt__}, resume with a Command, tasks not run again", { skip }, async () => {
  const t = await client.threads.create();
  const out = await client.runs.wait(t.thread_id, "workflow", { input: { n: 5 } });
  assert.deepEqual(Object.keys(out), ["__interrupt__"]);
  assert.deepEqual(out.__interrupt__[0].value, { question: "keep 10?" });
  const st = await client.threads.getState(t.thread_id);
  assert.deepEqual(st.next, ["workflow"]);
  assert.deepEqual(st.tasks[0].interrupts, out.__interrupt__, "the task's interrupt is its entrypoint's");
  const chunks = pairs(await collect(client.runs.stream(t.thread_id, "workflow", {
    command: { resume: "yes" }, streamMode: ["updates"],
  })));
  // double's result is replayed (no update); approve runs again with the answer
  assert.deepEqual(chunks, [
    ["updates", { approve: "yes" }],
    ["updates", { workflow: { answer: "yes", doubled: 10, runs: 1 } }],
  ]);
  // the next run sees the last result as ctx.previous
  await client.runs.wait(t.thread_id, "workflow", { input: { n: 1 } });
  const again = await client.runs.wait(t.thread_id, "workflow", { command: { resume: "no" } });
  assert.deepEqual(again, { answer: "no", doubled: 2, runs: 2 });
});
