// POST /threads/{id}/runs/stream and POST /runs/stream in every stream mode
// (observed/05_*.json), plus the raw SSE framing checked with fetch.
import { test } from "node:test";
import assert from "node:assert/strict";
import {
  INTERRUPT_ID_RE, ISO_RE, UUID_RE, URL_BASE, client, collect, hasGraph, pairs, parseSSE,
} from "./_lib.mjs";

// The first event of every stream: metadata {run_id, attempt: 1}.
function checkMetadata(chunks) {
  assert.ok(chunks.length > 0, "the stream has events");
  assert.equal(chunks[0].event, "metadata", "first event is metadata");
  assert.deepEqual(Object.keys(chunks[0].data).sort(), ["attempt", "run_id"]);
  assert.match(chunks[0].data.run_id, UUID_RE);
  assert.equal(chunks[0].data.attempt, 1);
  assert.ok(!chunks.some((c) => c.event === "end"), "there is no end event: the stream just closes");
  return chunks[0].data.run_id;
}
// Threaded streams number their events 0, 1, 2, ...
function checkIds(chunks) {
  assert.deepEqual(chunks.map((c) => c.id), chunks.map((_, i) => String(i)), "event ids count from 0");
}

test("chain, streamMode [values, updates]: the exact event sequence (05_runs_stream_values_updates)", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "chain", {
    input: { items: ["start"] }, streamMode: ["values", "updates"],
  }));
  const runId = checkMetadata(chunks);
  checkIds(chunks);
  assert.deepEqual(pairs(chunks), [
    ["values", { items: ["start"] }],
    ["updates", { a: { items: ["a"] } }],
    ["values", { items: ["start", "a"] }],
    ["updates", { b: { items: ["b"] } }],
    ["values", { items: ["start", "a", "b"] }],
    ["updates", { c: { items: ["c"] } }],
    ["values", { items: ["start", "a", "b", "c"] }],
  ]);
  assert.equal((await client.runs.get(t.thread_id, runId)).status, "success");
});

test("counter, streamMode \"updates\" (one mode as a string): one update per step (05b)", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "counter", { input: { n: 3 }, streamMode: "updates" }));
  checkMetadata(chunks);
  checkIds(chunks);
  assert.deepEqual(pairs(chunks), [
    ["updates", { inc: { count: 1 } }],
    ["updates", { inc: { count: 1 } }],
    ["updates", { inc: { count: 1 } }],
  ]);
});

test("counter, streamMode [values, updates]: the input's values first, count default 0", async () => {
  const chunks = await collect(client.runs.stream(null, "counter", { input: { n: 2 }, streamMode: ["values", "updates"] }));
  checkMetadata(chunks);
  assert.deepEqual(pairs(chunks), [
    ["values", { n: 2, count: 0 }],
    ["updates", { inc: { count: 1 } }],
    ["values", { n: 2, count: 1 }],
    ["updates", { inc: { count: 1 } }],
    ["values", { n: 2, count: 2 }],
  ]);
});

test("stateless stream with no streamMode: values only, and no event ids (05c)", async () => {
  const chunks = await collect(client.runs.stream(null, "chain", { input: { items: ["x"] } }));
  checkMetadata(chunks);
  assert.deepEqual(chunks.map((c) => c.id), chunks.map(() => undefined), "stateless streams send no id: lines");
  assert.deepEqual(pairs(chunks), [
    ["values", { items: ["x"] }],
    ["values", { items: ["x", "a"] }],
    ["values", { items: ["x", "a", "b"] }],
    ["values", { items: ["x", "a", "b", "c"] }],
  ]);
});

test("fanout: router's empty update, one update per Send, then the merged values (05d)", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "fanout", { input: { n: 3 }, streamMode: ["updates", "values"] }));
  checkMetadata(chunks);
  checkIds(chunks);
  const p = pairs(chunks);
  assert.equal(p.length, 6, JSON.stringify(p));
  assert.deepEqual(p[0], ["values", { n: 3, results: [] }]);
  assert.deepEqual(p[1], ["updates", { router: {} }], "a node that writes nothing: {router: {}}");
  // The workers run in parallel: their updates may come in any order.
  const workers = p.slice(2, 5);
  assert.ok(workers.every(([e, d]) => e === "updates" && Object.keys(d).length === 1 && "worker" in d), JSON.stringify(workers));
  assert.deepEqual(workers.map(([, d]) => d.worker.results[0]).sort(), [0, 1, 2]);
  assert.deepEqual(workers.map(([, d]) => d.worker.results.length), [1, 1, 1]);
  assert.deepEqual(p[5], ["values", { n: 3, results: [0, 1, 2] }], "Send results merge in task order");
});

test("approval: interrupt through the stream, then resume with a Command (05e)", async () => {
  const t = await client.threads.create();
  const first = await collect(client.runs.stream(t.thread_id, "approval", {
    input: { topic: "deploy" }, streamMode: ["values", "updates"],
  }));
  checkMetadata(first);
  checkIds(first);
  const p = pairs(first);
  assert.equal(p.length, 3, JSON.stringify(p));
  assert.deepEqual(p[0], ["values", { topic: "deploy" }]);
  assert.equal(p[1][0], "updates");
  assert.deepEqual(Object.keys(p[1][1]), ["__interrupt__"]);
  const intr = p[1][1].__interrupt__;
  assert.equal(intr.length, 1);
  assert.deepEqual(Object.keys(intr[0]).sort(), ["id", "value"]);
  assert.match(intr[0].id, INTERRUPT_ID_RE, "interrupt id: 32 hex digits");
  assert.deepEqual(intr[0].value, { question: "ok?" });
  // The last values chunk holds only the interrupt, not the state.
  assert.deepEqual(p[2], ["values", { __interrupt__: intr }]);
  assert.equal((await client.threads.get(t.thread_id)).status, "interrupted");

  const second = await collect(client.runs.stream(t.thread_id, "approval", {
    command: { resume: "yes" }, streamMode: ["values", "updates"],
  }));
  checkMetadata(second);
  checkIds(second);
  assert.notEqual(second[0].data.run_id, first[0].data.run_id);
  assert.deepEqual(pairs(second), [
    ["values", { topic: "deploy" }],
    ["updates", { ask: { approved: "yes" } }],
    ["values", { topic: "deploy", approved: "yes" }],
  ]);
  assert.equal((await client.threads.get(t.thread_id)).status, "idle");
});

test("chain, streamMode [tasks, checkpoints, debug]: event order and shapes (05f)", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "chain", {
    input: { items: ["s"] }, streamMode: ["tasks", "checkpoints", "debug"],
  }));
  const runId = checkMetadata(chunks);
  checkIds(chunks);
  const ev = chunks.slice(1);
  const perNode = ["tasks", "debug", "tasks", "debug", "checkpoints", "debug"];
  assert.deepEqual(ev.map((c) => c.event),
    ["checkpoints", "debug", "checkpoints", "debug", ...perNode, ...perNode, ...perNode]);

  // checkpoints: {values, metadata, next} per checkpoint.
  const cps = ev.filter((c) => c.event === "checkpoints").map((c) => c.data);
  assert.deepEqual(cps.map((c) => c.values.items), [[], ["s"], ["s", "a"], ["s", "a", "b"], ["s", "a", "b", "c"]]);
  assert.deepEqual(cps.map((c) => c.next), [["__start__"], ["a"], ["b"], ["c"], []]);
  assert.deepEqual(cps.map((c) => c.metadata.step), [-1, 0, 1, 2, 3]);
  assert.deepEqual(cps.map((c) => c.metadata.source), ["input", "loop", "loop", "loop", "loop"]);
  for (const c of cps) for (const k of ["values", "metadata", "next"]) assert.ok(k in c, `checkpoints event has ${k}`);

  // tasks: a start {id, name, input, triggers, interrupts, metadata} and a
  // result {id, name, result, interrupts, error} per task.
  const tasks = ev.filter((c) => c.event === "tasks").map((c) => c.data);
  assert.equal(tasks.length, 6);
  const inputs = [["s"], ["s", "a"], ["s", "a", "b"]];
  ["a", "b", "c"].forEach((name, i) => {
    const start = tasks[2 * i];
    const done = tasks[2 * i + 1];
    assert.equal(start.name, name);
    assert.ok(typeof start.id === "string" && start.id.length > 0, "task id");
    assert.deepEqual(start.input, { items: inputs[i] });
    assert.ok(Array.isArray(start.triggers) && start.triggers.every((x) => typeof x === "string"), "triggers: strings");
    assert.deepEqual(start.interrupts, []);
    assert.ok(!("result" in start), "a task start has no result");
    assert.equal(done.id, start.id, "the result names the task's id");
    assert.equal(done.name, name);
    assert.deepEqual(done.result, { items: [name] }, "result: the node's update as an object");
    assert.deepEqual(done.interrupts, []);
    assert.equal(done.error, null);
  });

  // debug: {step, type, timestamp, payload}; checkpoint / task / task_result.
  const dbg = ev.filter((c) => c.event === "debug").map((c) => c.data);
  assert.deepEqual(dbg.map((d) => d.type), ["checkpoint", "checkpoint", "task", "task_result", "checkpoint",
    "task", "task_result", "checkpoint", "task", "task_result", "checkpoint"]);
  assert.deepEqual(dbg.map((d) => d.step), [-1, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3]);
  for (const d of dbg) {
    assert.deepEqual(Object.keys(d).sort(), ["payload", "step", "timestamp", "type"]);
    assert.match(d.timestamp, ISO_RE);
  }
  const dcps = dbg.filter((d) => d.type === "checkpoint").map((d) => d.payload);
  dcps.forEach((p, i) => {
    assert.deepEqual(p.values, cps[i].values, "debug checkpoint values");
    assert.deepEqual(p.next, cps[i].next, "debug checkpoint next");
    assert.equal(p.metadata.step, cps[i].metadata.step);
    assert.equal(p.checkpoint.thread_id, t.thread_id);
    assert.equal(p.checkpoint.checkpoint_ns, "");
    assert.ok(typeof p.checkpoint.checkpoint_id === "string" && p.checkpoint.checkpoint_id.length > 0);
    assert.equal(p.config.configurable.thread_id, t.thread_id);
    assert.equal(p.config.configurable.checkpoint_id, p.checkpoint.checkpoint_id);
    assert.equal(p.config.configurable.run_id, runId);
    if (i === 0) assert.equal(p.parent_checkpoint, null);
    else assert.equal(p.parent_checkpoint.checkpoint_id, dcps[i - 1].checkpoint.checkpoint_id, "parent = previous checkpoint");
    assert.ok(Array.isArray(p.tasks));
    assert.deepEqual(p.tasks.map((x) => x.name), cps[i].next, "the payload's tasks are the next tasks");
  });
  // A task / task_result payload is the matching tasks event.
  const dtasks = dbg.filter((d) => d.type === "task" || d.type === "task_result").map((d) => d.payload);
  assert.deepEqual(dtasks, tasks);
  // The final state has the checkpoint the last event named.
  const st = await client.threads.getState(t.thread_id);
  assert.equal(st.checkpoint.checkpoint_id, dcps[4].checkpoint.checkpoint_id);
});

test("emitter, streamMode [custom, updates]: custom events come before the node's update", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "emitter", { input: { n: 2 }, streamMode: ["custom", "updates"] }));
  checkMetadata(chunks);
  checkIds(chunks);
  assert.deepEqual(pairs(chunks), [
    ["custom", { i: 0 }],
    ["custom", { i: 1 }],
    ["updates", { emit: { log: ["emit"] } }],
    ["updates", { done: { log: ["done"] } }],
  ]);
});

test("emitter, streamMode \"custom\" alone (stateless)", async () => {
  const chunks = await collect(client.runs.stream(null, "emitter", { input: { n: 3 }, streamMode: "custom" }));
  checkMetadata(chunks);
  assert.deepEqual(pairs(chunks), [["custom", { i: 0 }], ["custom", { i: 1 }], ["custom", { i: 2 }]]);
});

test("streamMode [messages-tuple, values] is accepted; a graph without messages sends only values", async () => {
  const chunks = await collect(client.runs.stream(null, "chain", { input: { items: [] }, streamMode: ["messages-tuple", "values"] }));
  checkMetadata(chunks);
  assert.deepEqual(pairs(chunks), [
    ["values", { items: [] }],
    ["values", { items: ["a"] }],
    ["values", { items: ["a", "b"] }],
    ["values", { items: ["a", "b", "c"] }],
  ]);
});

test("streamSubgraphs on a graph without subgraphs: plain event names", async () => {
  const chunks = await collect(client.runs.stream(null, "chain", { input: { items: [] }, streamMode: ["updates"], streamSubgraphs: true }));
  checkMetadata(chunks);
  assert.deepEqual(pairs(chunks), [
    ["updates", { a: { items: ["a"] } }],
    ["updates", { b: { items: ["b"] } }],
    ["updates", { c: { items: ["c"] } }],
  ]);
});

test("streamSubgraphs on nested: the child's events as \"updates|child:<task id>\"", async (t) => {
  if (!(await hasGraph("nested"))) {
    t.skip("the server has no graph \"nested\" (tests/server/graphs/nested.lua)");
    return;
  }
  const th = await client.threads.create();
  const chunks = await collect(client.runs.stream(th.thread_id, "nested", {
    input: { topic: "x" }, streamMode: ["updates"], streamSubgraphs: true,
  }));
  checkMetadata(chunks);
  checkIds(chunks);
  const p = pairs(chunks);
  assert.equal(p.length, 3, JSON.stringify(p));
  const m = /^updates\|child:(.+)$/.exec(p[0][0]);
  assert.ok(m, `the child's event is named updates|child:<task id>, got ${p[0][0]}`);
  assert.deepEqual(p[0][1], { work: { result: "done:x" } });
  assert.deepEqual(p[1], ["updates", { child: { topic: "x", result: "done:x" } }]);
  assert.deepEqual(p[2], ["updates", { finish: { log: ["finish"] } }]);
  // Without streamSubgraphs only the root's events.
  const plain = await collect(client.runs.stream(null, "nested", { input: { topic: "y" }, streamMode: ["updates"] }));
  assert.deepEqual(pairs(plain), [
    ["updates", { child: { topic: "y", result: "done:y" } }],
    ["updates", { finish: { log: ["finish"] } }],
  ]);
});

test("GraphRecursionError: 25 updates, then event error {error, message}, then the stream closes", async () => {
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "counter", { input: { n: 100 }, streamMode: ["updates"] }));
  checkMetadata(chunks);
  checkIds(chunks);
  const p = pairs(chunks);
  assert.equal(p.length, 26, `25 updates + 1 error, got ${p.length}`);
  assert.ok(p.slice(0, 25).every(([e, d]) => e === "updates" && JSON.stringify(d) === '{"inc":{"count":1}}'));
  const [name, data] = p[25];
  assert.equal(name, "error");
  assert.deepEqual(Object.keys(data).sort(), ["error", "message"]);
  assert.equal(data.error, "GraphRecursionError");
  assert.match(data.message, /recursion limit of 25/i);
  assert.equal((await client.threads.get(t.thread_id)).status, "error");
});

// ------------------------------------------------------------ raw SSE framing
async function rawStream(path, body) {
  const res = await fetch(URL_BASE + path, {
    method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
  });
  return { res, text: await res.text() };
}

test("raw SSE framing of a threaded stream: headers, event/data/id lines, ids from 0", async () => {
  const t = await client.threads.create();
  const { res, text } = await rawStream(`/threads/${t.thread_id}/runs/stream`, {
    assistant_id: "chain", input: { items: ["start"] }, stream_mode: ["values", "updates"],
  });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  assert.match(res.headers.get("cache-control") ?? "", /no-cache/);
  const events = parseSSE(text);
  assert.equal(events.length, 8);
  const runId = events[0].data.run_id;
  assert.equal(res.headers.get("content-location"), `/threads/${t.thread_id}/runs/${runId}`);
  events.forEach((e, i) => {
    assert.deepEqual(e.lines.map((l) => l.split(":")[0]), ["event", "data", "id"], `event ${i}: event, data, id lines`);
    assert.equal(e.id, String(i));
    assert.ok(!e.rawData.includes("\n"), "data is one line");
    assert.equal(JSON.stringify(e.data), e.rawData, "data is compact JSON");
  });
  assert.deepEqual(events[0].lines[0], "event: metadata");
  assert.deepEqual(events[0].data, { run_id: runId, attempt: 1 });
  assert.deepEqual(events.map((e) => e.event),
    ["metadata", "values", "updates", "values", "updates", "values", "updates", "values"]);
  assert.equal(events[7].rawData, '{"items":["start","a","b","c"]}');
  assert.ok(text.endsWith("\n\n"), "the last event ends with a blank line");
});

test("raw SSE framing of a stateless stream: no id lines, default mode values", async () => {
  const { res, text } = await rawStream(`/runs/stream`, { assistant_id: "chain", input: { items: ["x"] } });
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^text\/event-stream/);
  const events = parseSSE(text);
  assert.match(res.headers.get("content-location") ?? "", new RegExp(`^/runs/${events[0].data.run_id}$`));
  for (const e of events) {
    assert.deepEqual(e.lines.map((l) => l.split(":")[0]), ["event", "data"], "stateless: event and data lines only");
  }
  assert.deepEqual(events.map((e) => e.event), ["metadata", "values", "values", "values", "values"]);
  assert.deepEqual(events[4].data, { items: ["x", "a", "b", "c"] });
});

test("six stream modes at once: each mode's events, named after it, in the count LangGraph.js sends (observed/05f)", async () => {
  const modes = ["values", "updates", "custom", "debug", "tasks", "checkpoints"];
  const count = (chunks) => {
    const n = {};
    for (const c of chunks) n[c.event] = (n[c.event] ?? 0) + 1;
    return n;
  };
  // The chain (a, b, c): 4 values (the input and each node), 3 updates, a start and a
  // result per task, 5 checkpoints (the input's and each step's), 11 debug events (each
  // checkpoint and each task's start and result); no custom events.
  const t = await client.threads.create();
  const chunks = await collect(client.runs.stream(t.thread_id, "chain", { input: { items: ["s"] }, streamMode: modes }));
  checkMetadata(chunks);
  assert.deepEqual(count(chunks), { metadata: 1, values: 4, updates: 3, tasks: 6, checkpoints: 5, debug: 11 });
  assert.deepEqual(chunks.filter((c) => c.event === "values").at(-1).data, { items: ["s", "a", "b", "c"] });
  assert.deepEqual(chunks.map((c) => Number(c.id)), chunks.map((_, i) => i), "ids from 0, one per event");
  // Stateless, on the emitter (n custom events from its first node): the same per mode.
  const e = await collect(client.runs.stream(null, "emitter", { input: { n: 3 }, streamMode: modes }));
  assert.deepEqual(count(e), { metadata: 1, values: 3, updates: 2, custom: 3, tasks: 4, checkpoints: 4, debug: 8 });
  assert.deepEqual(e.filter((c) => c.event === "custom").map((c) => c.data), [{ i: 0 }, { i: 1 }, { i: 2 }]);
});
