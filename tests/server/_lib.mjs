// Shared helpers of the *.test.mjs files (run by run.mjs; see README.md).
import assert from "node:assert/strict";
import { createHash, randomUUID } from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";

export const URL_BASE = (process.env.SST_URL ?? "").replace(/\/$/, "");
if (!URL_BASE) {
  throw new Error("SST_URL is not set: run the tests through tests/server/run.mjs");
}
// "langgraphjs" when run against LangGraph.js's own server (run.mjs --url ...
// detects it, or --peer langgraphjs); "" against superstep serve.
export const PEER = process.env.SST_PEER ?? "";
export const ON_PEER = PEER !== "";

// Skip reason for a test of behaviour where superstep deliberately differs
// from LangGraph.js (README.md of tests/server lists them).
export const oursOnly = (why) => (ON_PEER ? `superstep differs from ${PEER} on purpose: ${why}` : false);

export function makeClient(extra = {}) {
  return new Client({ apiUrl: URL_BASE, apiKey: null, callerOptions: { maxRetries: 0 }, ...extra });
}
export const client = makeClient();

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Deadlines only turn a hang into a failure: SST_TEST_TIME_SCALE (docs/testing.md) raises
// them on slow machines and in sanitizer builds.
export const TIME_SCALE = Math.max(1, Number(process.env.SST_TEST_TIME_SCALE) || 1);
export { randomUUID };

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const INTERRUPT_ID_RE = /^[0-9a-f]{32}$/;
export const ISO_RE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/;

// uuid5(name, namespace) as LangGraph derives the default assistant ids.
export function uuid5(name, namespace = "6ba7b821-9dad-11d1-80b4-00c04fd430c8") {
  const ns = Buffer.from(namespace.replace(/-/g, ""), "hex");
  const h = createHash("sha1").update(ns).update(Buffer.from(name, "utf8")).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}

export const ASSISTANT = {
  counter: "09d6caf4-2ef3-5a8b-b1a7-114690ed5d45",
  chain: "608f7b9c-04e5-5cf2-a3f7-ba75a3719808",
  approval: "e234584d-b7bf-527f-9d06-ba77f8f5172d",
  fanout: "3c910f44-3290-5a7d-be50-b5d89ccad245",
  emitter: "36d5ceb9-f868-52bc-a4b5-bc1adfecb099",
};

// Plain HTTP: {status, headers, text, json (undefined when not JSON)}.
export async function raw(path, { method = "GET", body, headers = {}, json } = {}) {
  const init = { method, headers: { ...headers } };
  if (json !== undefined) {
    init.body = JSON.stringify(json);
    init.headers["content-type"] = "application/json";
  } else if (body !== undefined) {
    init.body = body;
    init.headers["content-type"] ??= "application/json";
  }
  const res = await fetch(URL_BASE + path, init);
  const text = await res.text();
  let parsed;
  try { parsed = text.length ? JSON.parse(text) : undefined; } catch { parsed = undefined; }
  return { status: res.status, headers: res.headers, text, json: parsed };
}

// Parse SSE text as the spec says; every block keeps its raw lines too.
export function parseSSE(text) {
  const out = [];
  for (const block of text.split(/\r?\n\r?\n/)) {
    if (!block.trim()) continue;
    const lines = block.split(/\r?\n/).filter((l) => !l.startsWith(":")); // comments = keep-alives
    if (!lines.length) continue;
    const ev = { lines };
    const data = [];
    for (const line of lines) {
      const i = line.indexOf(":");
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? "" : line.slice(i + 1);
      if (value.startsWith(" ")) value = value.slice(1);
      if (field === "data") data.push(value);
      else ev[field] = value;
    }
    if (data.length) {
      ev.rawData = data.join("\n");
      try { ev.data = JSON.parse(ev.rawData); } catch { ev.data = ev.rawData; }
    }
    out.push(ev);
  }
  return out;
}

// Collect an SDK stream into [{event, data, id}].
export async function collect(gen) {
  const out = [];
  for await (const part of gen) out.push({ event: part.event, data: part.data, id: part.id });
  return out;
}
// [event, data] pairs without the metadata event (asserted separately).
export const pairs = (chunks) => chunks.filter((c) => c.event !== "metadata").map((c) => [c.event, c.data]);

// The SDK's HTTPError carries .status and .text (the raw body). Asserts the
// call fails with `status` (a number or a list of allowed numbers). Against
// superstep the body must be JSON {"detail": "..."} and detail must contain
// every string of `names` (or match every RegExp); LangGraph.js answers with
// text/plain bodies, so there only the status is checked.
export async function rejects(promise, status, names = []) {
  let err;
  try {
    const v = await promise;
    assert.fail(`expected HTTP ${status}, the call succeeded with ${JSON.stringify(v)?.slice(0, 300)}`);
  } catch (e) {
    if (e instanceof assert.AssertionError) throw e;
    err = e;
  }
  assert.ok(err.status !== undefined, `expected an HTTP error ${status}, got ${err?.name}: ${err?.message}`);
  checkStatus(err.status, status, err.text);
  checkDetail(err.text, names);
  return err;
}

// Same checks for a raw() response; also wants content-type application/json
// against superstep.
export function assertProblem(res, status, names = []) {
  checkStatus(res.status, status, res.text);
  if (!ON_PEER) {
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/, "error bodies are JSON");
  }
  checkDetail(res.text, names);
}

function checkStatus(got, want, text) {
  const ok = Array.isArray(want) ? want.includes(got) : got === want;
  assert.ok(ok, `expected HTTP ${JSON.stringify(want)}, got ${got}: ${String(text).slice(0, 300)}`);
}

function checkDetail(text, names) {
  if (ON_PEER) return;
  let body;
  try { body = JSON.parse(text); } catch { assert.fail(`error body is not JSON: ${String(text).slice(0, 300)}`); }
  assert.equal(typeof body?.detail, "string", `error body must be {"detail": "..."}, got ${text}`);
  assert.ok(body.detail.length > 0, "detail is empty");
  for (const n of names) {
    if (n instanceof RegExp) assert.match(body.detail, n, `detail should match ${n}`);
    else assert.ok(body.detail.includes(n), `detail ${JSON.stringify(body.detail)} should name ${JSON.stringify(n)}`);
  }
}

// Poll fn() until it returns a truthy value; fail after ms with `what`.
export async function waitFor(what, fn, ms = 10000, every = 50) {
  ms *= TIME_SCALE;
  const end = Date.now() + ms;
  let last;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last;
    await sleep(every);
  }
  assert.fail(`timed out after ${ms} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}

export async function runStatus(threadId, runId) {
  return (await client.runs.get(threadId, runId)).status;
}

// A long counter run (delay_ms per step) for cancel / multitask tests;
// n steps of delayMs each, so it ends by itself after n*delayMs ms at worst.
export const longCounter = (n = 400, delayMs = 50) => ({
  input: { n, delay_ms: delayMs },
  config: { recursion_limit: n + 10 },
});

// Starts a long counter run and waits until it is running and has made
// progress (count >= 1 in the thread's state).
export async function startLongRun(threadId, extra = {}) {
  const run = await client.runs.create(threadId, "counter", { ...longCounter(), ...extra });
  await waitFor("the long run to be running", async () => (await runStatus(threadId, run.run_id)) === "running", 10000);
  await waitFor("the long run to commit a step", async () => {
    const st = await client.threads.getState(threadId);
    return (st.values?.count ?? 0) >= 1;
  }, 10000);
  return run;
}

// Best effort: cancel a run a failed test left running.
export async function cancelQuietly(threadId, runId) {
  try { await client.runs.cancel(threadId, runId, true); } catch { /* already done */ }
}

// Does the server serve this graph (superstep-only graphs: nested, chat)?
const graphs = new Map();
export async function hasGraph(graphId) {
  if (!graphs.has(graphId)) {
    const found = await client.assistants.search({ graphId, limit: 1 });
    graphs.set(graphId, found.length > 0);
  }
  return graphs.get(graphId);
}
