#!/usr/bin/env node
// Hostile and malformed input against `superstep serve` (tests/server/README.md).
//
//   node bad_input.mjs --superstep /path/to/superstep [--keep] [--only a,b]
//
// Starts its own servers (temporary databases): the main one with
// --max-body 1M --max-connections 200 --timeout 5, one with the default
// options (a 100 MB body) and one with --auth-token-env. Every case prints
// what the server answered; a failed case does not stop the others. After the
// abuse the main server must still answer GET /ok, a thread created before it
// must still have its state, and a SIGTERM must stop it with exit code 0 (and
// a restart on the same database still sees the thread).
import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { parseArgs, startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONFIG = path.join(HERE, "langgraph.json");
const MAX_CONN = 200;
const IDLE_TIMEOUT_S = 5;
const FLOOD = 10000;

const opts = parseArgs("bad_input.mjs", "node bad_input.mjs --superstep PATH [--keep] [--only case,...]",
  { only: null }, { lists: ["only"] });

// 10 000 sockets need more file descriptors than the usual soft limit of
// 1024: run again once under a shell that raises it as far as allowed.
if (!process.env.SST_BAD_INPUT_ULIMIT) {
  const child = spawn("/bin/sh", ["-c", 'ulimit -n 20000 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$@"',
    "sh", process.execPath, ...process.argv.slice(1)], {
    stdio: "inherit", env: { ...process.env, SST_BAD_INPUT_ULIMIT: "1" },
  });
  for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => child.kill(sig));
  child.on("exit", (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
} else {
  await main();
}

async function main() {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-bad-input-"));
  const servers = new Set();
  const failures = [];
  const t0 = Date.now();
  const fdLimit = spawnSync("/bin/sh", ["-c", "ulimit -n"], { encoding: "utf8" }).stdout.trim();

  class Fail extends Error {}
  const check = (cond, msg) => { if (!cond) throw new Fail(typeof msg === "function" ? msg() : msg); };

  async function start(name, args, env = {}) {
    const s = await startServer({
      superstep: opts.superstep, config: CONFIG, env,
      args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(tmp, `${name}.db`), ...args],
      timeoutMs: 30000,
    });
    s.name = name;
    servers.add(s);
    return s;
  }
  async function stop(s) {
    servers.delete(s);
    return s.stop(10000);
  }

  const want = (name) => !opts.only || opts.only.some((o) => name.startsWith(o));
  // Runs one case: fn returns a short description of what the server answered.
  async function kase(name, fn) {
    if (!want(name)) return;
    const t = Date.now();
    try {
      const got = await fn();
      console.log(`ok    ${name} (${Date.now() - t} ms): ${got}`);
    } catch (e) {
      const msg = e instanceof Fail ? e.message : (e.stack ?? String(e));
      failures.push(`${name}: ${msg}`);
      console.log(`FAIL  ${name} (${Date.now() - t} ms): ${msg}`);
    }
  }

  // Plain HTTP through fetch: {status, headers, text, json}.
  async function req(base, p, { method = "GET", body, headers = {}, timeoutMs = 15000 } = {}) {
    const init = { method, headers: { "content-type": "application/json", ...headers }, signal: AbortSignal.timeout(timeoutMs) };
    if (body !== undefined) init.body = typeof body === "string" || Buffer.isBuffer(body) ? body : JSON.stringify(body);
    const res = await fetch(base + p, init);
    const text = await res.text();
    let json;
    try { json = JSON.parse(text); } catch { json = undefined; }
    return { status: res.status, headers: res.headers, text, json };
  }
  const short = (r) => `${r.status} ${r.text.length > 160 ? `${r.text.slice(0, 160)}...` : r.text}`;

  // A 4xx (one of `statuses`) with a JSON {"detail"} that names every `names`.
  function problem(r, statuses, names = [], what = "") {
    const list = Array.isArray(statuses) ? statuses : [statuses];
    check(list.includes(r.status), `${what}want HTTP ${list.join("/")}, got ${short(r)}`);
    check(/^application\/json/.test(r.headers.get("content-type") ?? ""), `${what}error body is not JSON (content-type ${r.headers.get("content-type")}): ${short(r)}`);
    check(typeof r.json?.detail === "string" && r.json.detail.length > 0, `${what}want {"detail": "..."}, got ${short(r)}`);
    for (const n of names) {
      const ok = n instanceof RegExp ? n.test(r.json.detail) : r.json.detail.includes(n);
      check(ok, `${what}detail ${JSON.stringify(r.json.detail)} should name ${n}`);
    }
    return short(r);
  }

  // Raw bytes over one TCP connection: resolves {status, head, body, bytesWritten, ms}.
  function rawExchange(port, head, bodyChunks = [], { timeoutMs = 15000 } = {}) {
    return new Promise((resolve, reject) => {
      const s = net.connect({ port, host: "127.0.0.1" });
      const tStart = Date.now();
      let got = "";
      const timer = setTimeout(() => { s.destroy(); reject(new Fail(`no answer within ${timeoutMs} ms (got ${JSON.stringify(got.slice(0, 200))})`)); }, timeoutMs);
      let answered = false;
      // Like a client sending "Expect: 100-continue": give the server 100 ms to
      // answer from the headers alone before sending the body.
      s.on("connect", () => {
        s.write(head);
        setTimeout(() => { if (!answered && !s.destroyed) for (const c of bodyChunks) s.write(c); }, 100);
      });
      s.on("data", (d) => {
        got += d;
        answered = true;
        const i = got.indexOf("\r\n\r\n");
        if (i < 0) return;
        const m = /content-length:\s*(\d+)/i.exec(got.slice(0, i));
        if (m && got.length - i - 4 < Number(m[1])) return;
        clearTimeout(timer);
        s.destroy();
        resolve({ status: Number(got.split(" ")[1]), head: got.slice(0, i), body: got.slice(i + 4), ms: Date.now() - tStart });
      });
      s.on("error", (e) => { if (!answered) { clearTimeout(timer); reject(new Fail(`${e.code ?? e.message} before any answer`)); } });
      s.on("close", () => { clearTimeout(timer); if (got) reject(new Fail(`the connection closed mid-answer: ${JSON.stringify(got.slice(0, 300))}`)); else reject(new Fail("the connection closed without an answer")); });
    });
  }

  // A body of `total` bytes sent as fast as the socket takes it; stops writing
  // at the first byte of the answer. Resolves {status, head, body, writtenAtAnswer, ms}.
  function streamBody(port, p, total, { chunked, timeoutMs = 30000 } = {}) {
    return new Promise((resolve) => {
      const chunk = Buffer.alloc(1 << 20, 0x20); // spaces: valid JSON whitespace
      const framed = chunked ? Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]) : chunk;
      const s = net.connect({ port, host: "127.0.0.1" });
      const tStart = Date.now();
      let sent = 0, got = "", writtenAtAnswer = null, msAtAnswer = null, error = null;
      const timer = setTimeout(() => { error = `no answer within ${timeoutMs} ms`; s.destroy(); }, timeoutMs);
      const pump = () => {
        while (writtenAtAnswer === null && sent < total && !s.destroyed) {
          sent += chunk.length;
          if (!s.write(framed)) { s.once("drain", pump); return; }
        }
        if (sent >= total && chunked && writtenAtAnswer === null && !s.destroyed) s.write("0\r\n\r\n");
      };
      s.on("connect", () => {
        s.write(`POST ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
          (chunked ? "Transfer-Encoding: chunked\r\n" : `Content-Length: ${total}\r\n`) + "\r\n");
        setTimeout(pump, 100); // an answer from the headers alone comes first
      });
      s.on("data", (d) => {
        if (writtenAtAnswer === null) { writtenAtAnswer = s.bytesWritten; msAtAnswer = Date.now() - tStart; }
        got += d;
        const i = got.indexOf("\r\n\r\n");
        const m = /content-length:\s*(\d+)/i.exec(got);
        if (i >= 0 && m && got.length - i - 4 >= Number(m[1])) s.destroy();
      });
      s.on("error", (e) => { if (!got) error = `${e.code ?? e.message} after ${s.bytesWritten} bytes`; });
      s.on("close", () => {
        clearTimeout(timer);
        const i = got.indexOf("\r\n\r\n");
        resolve({ status: got ? Number(got.split(" ")[1]) : null, head: got.slice(0, Math.max(i, 0)), body: i >= 0 ? got.slice(i + 4) : "",
          writtenAtAnswer, ms: msAtAnswer, error });
      });
    });
  }

  // GET with a body (fetch refuses one).
  function getWithBody(port, p, body) {
    return new Promise((resolve, reject) => {
      const r = http.request({ host: "127.0.0.1", port, path: p, method: "GET",
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) } }, (res) => {
        let t = "";
        res.setEncoding("utf8");
        res.on("data", (d) => { t += d; });
        res.on("end", () => { let json; try { json = JSON.parse(t); } catch { /* not JSON */ } resolve({ status: res.statusCode, text: t, json }); });
      });
      r.on("error", reject);
      r.end(body);
    });
  }

  const fdCount = (pid) => { try { return fs.readdirSync(`/proc/${pid}/fd`).length; } catch { return null; } };

  // ---------------------------------------------------------------------------
  console.log(`bad_input.mjs: tmp ${tmp}; open files limit ${fdLimit}`);
  let srv = await start("main", ["--max-body", "1M", "--max-connections", String(MAX_CONN), "--timeout", String(IDLE_TIMEOUT_S)]);
  let U = srv.url;
  let client = new Client({ apiUrl: U, apiKey: null, callerOptions: { maxRetries: 0 } });

  // Committed data from before the abuse: a thread whose run finished.
  const keep = await client.threads.create({ metadata: { purpose: "survivor" } });
  const keepRun = await client.runs.wait(keep.thread_id, "counter", { input: { n: 3 } });
  if (keepRun?.count !== 3) throw new Error(`setup: counter run gave ${JSON.stringify(keepRun)}`);
  const TID = keep.thread_id;
  // A scratch thread for the cases that post runs: a run the server wrongly
  // accepts must not touch the survivor.
  const SCR = (await client.threads.create()).thread_id;
  async function survives(what) {
    const dead = () => srv.proc.exitCode !== null || srv.proc.signalCode !== null;
    if (dead()) throw new Fail(`${what}: the server exited (code ${srv.proc.exitCode}, signal ${srv.proc.signalCode}); stderr tail:\n${srv.stderr().slice(-1500)}`);
    let ok;
    try {
      ok = await req(U, "/ok", { timeoutMs: 10000 });
    } catch (e) {
      throw new Fail(`${what}: GET /ok afterwards failed: ${e.message} (${e.cause?.code ?? ""}); the server process ${dead() ? "exited" : "is alive"}; stderr tail:\n${srv.stderr().slice(-1500)}`);
    }
    check(ok.status === 200 && ok.json?.ok === true, `${what}: GET /ok afterwards: ${short(ok)}`);
    const st = await client.threads.getState(TID);
    check(st.values?.count === 3, `${what}: the thread made before the abuse lost its state: ${JSON.stringify(st.values)}`);
  }

  // Started now, checked at the end: a connection that never sends a byte, and
  // a slowloris (a header byte per second, never finished). Both must be closed
  // by --timeout (5 s); allow 3x for a loaded machine.
  const lingering = {};
  function watchConn(label, dripMs) {
    if (!want(label)) return;
    lingering[label] = new Promise((resolve) => {
      const s = net.connect({ port: srv.port, host: "127.0.0.1" });
      const tStart = Date.now();
      const line = "GET /ok HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ";
      let sent = 0, drip = null, got = "";
      const limit = IDLE_TIMEOUT_S * 3000 + 2000;
      const timer = setTimeout(() => { clearInterval(drip); s.destroy(); resolve({ closedBy: "us", ms: Date.now() - tStart, sent }); }, limit);
      s.on("connect", () => {
        if (dripMs) drip = setInterval(() => { s.write(sent < line.length ? line[sent] : "a"); sent++; }, dripMs);
      });
      s.on("data", (d) => { got += d; });
      s.on("error", () => {});
      s.on("close", () => { clearTimeout(timer); clearInterval(drip); resolve({ closedBy: "server", ms: Date.now() - tStart, sent, got }); });
    });
  }
  watchConn("idle connection", 0);
  watchConn("slowloris", 1000);

  // --- malformed JSON on every POST/PUT route with a body ----------------------
  const routes = [
    ["POST", "/threads"], ["POST", "/threads/search"], ["POST", "/threads/count"],
    ["POST", `/threads/${TID}/runs`], ["POST", `/threads/${TID}/runs/wait`], ["POST", `/threads/${TID}/runs/stream`],
    ["POST", "/runs"], ["POST", "/runs/wait"], ["POST", "/runs/stream"],
    ["POST", "/assistants"], ["POST", "/assistants/search"], ["POST", `/threads/${TID}/state`],
    ["PUT", "/store/items"], ["POST", "/store/items/search"],
  ];
  const malformed = ['{"assistant_id": "counter",', "{'a': 1}", '{"a": 1,}', '{"a": 1} trailing', "NaN", '{"a": "\\ud800"}'];
  await kase("malformed JSON on every POST route", async () => {
    const seen = [];
    for (const [method, p] of routes) {
      for (const body of malformed) {
        const r = await req(U, p, { method, body });
        problem(r, 400, [/Malformed JSON/, /line \d+, column \d+/], `${method} ${p} ${JSON.stringify(body)}: `);
      }
      seen.push(`${method} ${p}`);
    }
    const r = await req(U, "/threads/search", { method: "POST", body: '{"limit": 5,' });
    return `${seen.length} routes x ${malformed.length} bodies -> 400, e.g. ${short(r)}`;
  });
  await kase("invalid UTF-8 and deep nesting", async () => {
    const a = await req(U, "/threads", { method: "POST", body: Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]) });
    problem(a, 400, [/Malformed JSON/, /UTF-8/]);
    const b = await req(U, "/threads", { method: "POST", body: "[".repeat(100000) });
    problem(b, 400, [/Malformed JSON/]);
    return `${short(a)}; 100000 x '[' -> ${short(b)}`;
  });
  await kase("body not an object", async () => {
    const out = [];
    for (const body of ["[1, 2]", '"x"', "null", "42"]) {
      const r = await req(U, `/threads/${SCR}/runs`, { method: "POST", body });
      problem(r, 400, ["object"], `${body}: `);
      out.push(`${body} -> ${r.status}`);
    }
    return out.join(", ");
  });
  await kase("survives malformed JSON", async () => { await survives("malformed JSON"); return "GET /ok 200, state intact"; });

  // --- wrong types, field by field --------------------------------------------
  const run = { assistant_id: "counter", input: { n: 1 } };
  const wrong = [
    // [route, body, statuses, names]
    [`/threads/${SCR}/runs`, { ...run, assistant_id: 5 }, 400, ["assistant_id"]],
    [`/threads/${SCR}/runs`, { input: { n: 1 } }, 400, ["assistant_id"]],
    [`/threads/${SCR}/runs`, { ...run, assistant_id: "no-such-graph" }, 404, ["no-such-graph"]],
    [`/threads/${SCR}/runs`, { ...run, config: "x" }, 400, ["config"]],
    [`/threads/${SCR}/runs`, { ...run, config: [1] }, 400, ["config"]],
    // LangGraph's schema has config.recursion_limit an integer (422 there).
    [`/threads/${SCR}/runs`, { ...run, config: { recursion_limit: "x" } }, [400, 422], ["recursion_limit"]],
    [`/threads/${SCR}/runs`, { ...run, metadata: "x" }, 400, ["metadata"]],
    [`/threads/${SCR}/runs`, { ...run, metadata: [1] }, 400, ["metadata"]],
    [`/threads/${SCR}/runs`, { ...run, stream_mode: 5 }, 400, ["stream_mode"]],
    [`/threads/${SCR}/runs`, { ...run, stream_mode: "bogus" }, 400, ["stream_mode", "bogus"]],
    [`/threads/${SCR}/runs`, { ...run, stream_mode: ["values", 3] }, 400, ["stream_mode"]],
    [`/threads/${SCR}/runs`, { ...run, interrupt_before: 5 }, 400, ["interrupt_before"]],
    [`/threads/${SCR}/runs`, { ...run, interrupt_after: { a: 1 } }, 400, ["interrupt_after"]],
    [`/threads/${SCR}/runs`, { ...run, multitask_strategy: "bogus" }, 400, ["multitask_strategy"]],
    [`/threads/${SCR}/runs`, { ...run, after_seconds: -1 }, 400, ["after_seconds"]],
    [`/threads/${SCR}/runs`, { ...run, after_seconds: "soon" }, 400, ["after_seconds"]],
    [`/threads/${SCR}/runs`, { ...run, webhook: "not a url" }, 400, ["webhook"]],
    [`/threads/${SCR}/runs`, { ...run, webhook: "ftp://example.com/x" }, 400, ["webhook"]],
    [`/threads/${SCR}/runs`, { ...run, webhook: 5 }, 400, ["webhook"]],
    [`/threads/${SCR}/runs`, { ...run, if_not_exists: "bogus" }, 400, ["if_not_exists"]],
    [`/threads/${SCR}/runs`, { ...run, on_disconnect: "bogus" }, 400, ["on_disconnect"]],
    [`/threads/${SCR}/runs`, { ...run, checkpoint_id: 5 }, 400, ["checkpoint_id"]],
    [`/threads/${SCR}/runs`, { assistant_id: "counter", command: "x" }, 400, ["command"]],
    [`/threads/${SCR}/runs`, { ...run, context: "x" }, 400, ["context"]],
    [`/threads/${SCR}/runs`, { ...run, stream_subgraphs: "x" }, 400, ["stream_subgraphs"]],
    [`/threads/${SCR}/runs`, { ...run, frobnicate: 1 }, 400, ["frobnicate"]],
    ["/runs/wait", { ...run, config: "x" }, 400, ["config"]],
    ["/runs/wait", { ...run, on_completion: "bogus" }, 400, ["on_completion"]],
    ["/runs/stream", { ...run, stream_mode: "bogus" }, 400, ["stream_mode"]],
    ["/threads", { thread_id: "not-a-uuid" }, 400, ["thread_id"]],
    ["/threads", { thread_id: 5 }, 400, ["thread_id"]],
    ["/threads", { metadata: [1] }, 400, ["metadata"]],
    ["/threads", { metadata: "x" }, 400, ["metadata"]],
    ["/threads", { if_exists: "bogus" }, 400, ["if_exists"]],
    ["/threads", { ttl: "x" }, 400, ["ttl"]],
    ["/threads", { supersteps: "x" }, 400, ["supersteps"]],
    ["/threads/search", { limit: "x" }, 400, ["limit"]],
    ["/threads/search", { limit: -1 }, 400, ["limit"]],
    ["/threads/search", { offset: -1 }, 400, ["offset"]],
    ["/threads/search", { status: "bogus" }, 400, ["status"]],
    ["/assistants", {}, 400, ["graph_id"]],
    ["/assistants", { graph_id: "no-such-graph" }, 404, ["no-such-graph"]],
    ["/assistants", { graph_id: 5 }, 400, ["graph_id"]],
    ["/assistants", { graph_id: "counter", config: "x" }, 400, ["config"]],
    ["/assistants", { graph_id: "counter", metadata: [1] }, 400, ["metadata"]],
  ];
  const storeWrong = [
    [{ namespace: "a", key: "k", value: {} }, ["namespace"]],
    [{ namespace: [1], key: "k", value: {} }, ["namespace"]],
    [{ namespace: ["a"], key: "k", value: "x" }, ["value"]],
    [{ namespace: ["a"], key: "k", value: [1] }, ["value"]],
    [{ namespace: ["a"], key: 5, value: {} }, ["key"]],
    [{ namespace: ["a"], value: {} }, ["key"]],
  ];
  await kase("wrong types in body fields (runs, threads, search, assistants)", async () => {
    const bad = [];
    for (const [p, body, st, names] of wrong) {
      const r = await req(U, p, { method: "POST", body });
      try { problem(r, st, names); } catch (e) { bad.push(`POST ${p} ${JSON.stringify(body)}: ${e.message}`); }
    }
    check(bad.length === 0, `${bad.length} of ${wrong.length} wrong:\n    ${bad.join("\n    ")}`);
    return `${wrong.length} bodies -> 4xx naming the field`;
  });
  await kase("wrong types in store put", async () => {
    const out = [];
    for (const [body, names] of storeWrong) {
      const r = await req(U, "/store/items", { method: "PUT", body });
      problem(r, 400, names, `PUT /store/items ${JSON.stringify(body)}: `);
      out.push(r.json.detail);
    }
    return `${storeWrong.length} bodies -> 400, e.g. ${JSON.stringify(out[0])}`;
  });
  await kase("wrong types through the SDK", async () => {
    const out = [];
    const expectErr = async (p, status, name) => {
      try { await p; } catch (e) {
        check(e.status === status, `want ${status}, got ${e.status}: ${e.text ?? e.message}`);
        check(String(e.text).includes(name), `${e.text} should name ${name}`);
        out.push(`${e.status}`);
        return;
      }
      throw new Fail(`want ${status}, the call succeeded`);
    };
    await expectErr(client.threads.create({ threadId: "abc" }), 400, "thread_id");
    await expectErr(client.runs.create(SCR, "counter", { input: { n: 1 }, multitaskStrategy: "bogus" }), 400, "multitask_strategy");
    await expectErr(client.runs.create(SCR, "counter", { input: { n: 1 }, afterSeconds: -5 }), 400, "after_seconds");
    await expectErr(client.store.putItem(["a"], "k", "not an object"), 400, "value");
    return `threads.create(threadId "abc"), runs.create(multitaskStrategy "bogus" / afterSeconds -5), store.putItem(value string) -> ${out.join(", ")}`;
  });
  // LangGraph's API takes any JSON as input (its schema: object, array, string,
  // number, boolean or null) and a graph with an object state then fails the
  // run; superstep refuses it before queueing anything (docs/server.md,
  // "Errors"): a StateGraph's input is an object or null (an entrypoint's is
  // any value: errors.test.mjs).
  await kase("input that is not an object for a StateGraph: 400 naming input, no run", async () => {
    const out = [];
    for (const input of ["hello", 5, [1, 2], true]) {
      const th = await client.threads.create();
      const r = await req(U, `/threads/${th.thread_id}/runs`, { method: "POST", body: { assistant_id: "counter", input } });
      problem(r, 400, ["input"]);
      const runs = await client.runs.list(th.thread_id);
      check(runs.length === 0, `input ${JSON.stringify(input)}: ${runs.length} run(s) created`);
      out.push(`${JSON.stringify(input)} -> 400`);
    }
    return out.join("; ");
  });
  await kase("interrupt_before an unknown node: 4xx or a failed run", async () => {
    const th = await client.threads.create();
    const r = await req(U, `/threads/${th.thread_id}/runs`, { method: "POST", body: { ...run, interrupt_before: ["no_such_node"] } });
    if (r.status >= 400 && r.status < 500) return problem(r, r.status, ["no_such_node"]);
    check(r.status === 200, `want 4xx or 200, got ${short(r)}`);
    await client.runs.join(th.thread_id, r.json.run_id);
    const done = await client.runs.get(th.thread_id, r.json.run_id);
    check(done.status === "error", `the run ended ${done.status}, want error (LangGraph: "Interrupt node ... not found")`);
    return `200, the run ends in ${done.status} (as LangGraph)`;
  });
  await kase("survives wrong types", async () => { await survives("wrong types"); return "GET /ok 200, state intact"; });

  // --- body size ----------------------------------------------------------------
  const twoMB = Buffer.alloc(2 * 1024 * 1024, 0x20);
  await kase("2 MB body with Content-Length against --max-body 1M", async () => {
    const r = await rawExchange(srv.port,
      `POST /threads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${twoMB.length}\r\n\r\n`, [twoMB]);
    check(r.status === 413, `want 413, got ${r.status} ${r.body}`);
    check(/application\/json/i.test(r.head), `want a JSON body: ${r.head}`);
    check(/"detail":"[^"]*limit/.test(r.body), `detail should name the limit: ${r.body}`);
    return `${r.status} ${r.body} in ${r.ms} ms`;
  });
  await kase("2 MB chunked body (no Content-Length) against --max-body 1M", async () => {
    const chunks = [];
    for (let i = 0; i < 8; i++) chunks.push(`40000\r\n${" ".repeat(0x40000)}\r\n`);
    chunks.push("0\r\n\r\n");
    const r = await rawExchange(srv.port,
      "POST /threads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n", chunks);
    check(r.status === 413, `want 413, got ${r.status} ${r.body}`);
    check(/"detail":"[^"]*limit/.test(r.body), `detail should name the limit: ${r.body}`);
    return `${r.status} ${r.body} in ${r.ms} ms`;
  });
  await kase("just under the limit is fine", async () => {
    const body = JSON.stringify({ metadata: { pad: "x".repeat(1024 * 1024 - 100) } });
    const r = await req(U, "/threads", { method: "POST", body });
    check(r.status === 200, `a ${body.length}-byte body under --max-body 1M: want 200, got ${short(r)}`);
    return `${body.length} bytes -> ${r.status}`;
  });
  await kase("survives big bodies", async () => { await survives("big bodies"); return "GET /ok 200, state intact"; });

  // --- long ids, unknown routes, wrong methods, GET with a body ------------------
  await kase("10 000-byte thread id in the path", async () => {
    const long = "a".repeat(10000);
    const out = [];
    for (const [method, p] of [["GET", `/threads/${long}`], ["GET", `/threads/${long}/state`], ["GET", `/threads/${long}/runs`],
      ["POST", `/threads/${long}/runs`], ["GET", `/threads/${TID}/runs/${long}`], ["POST", `/threads/${long}/runs/wait`]]) {
      const r = await req(U, p, { method, body: method === "POST" ? run : undefined });
      check(r.status >= 400 && r.status < 500, `${method} ${p.slice(0, 40)}...: want 4xx, got ${short(r)}`);
      if (r.status === 400) problem(r, 400, [/thread_id|run_id/, "UUID"], `${method} ${p.slice(0, 40)}...: `);
      out.push(`${method} ${p.replace(long, "<10000 a>")} -> ${r.status}`);
    }
    const huge = await req(U, `/threads/${"a".repeat(100000)}`);
    check(huge.status >= 400 && huge.status < 500, `a 100 000-byte URL: want 4xx, got ${short(huge)}`);
    out.push(`GET /threads/<100000 a> -> ${huge.status}`);
    await survives("long ids");
    return out.join("; ");
  });
  await kase("unknown routes: 404", async () => {
    const out = [];
    for (const p of ["/nope", "/threads/a/b/c/d/e", `/threads/${TID}/nope`, "/store/items/nope/x"]) {
      const r = await req(U, p);
      problem(r, 404, [], `GET ${p}: `);
      out.push(`GET ${p} -> ${r.status} ${r.text}`);
    }
    const rid = "01a20000-0000-7000-8000-000000000000";
    const r = await req(U, `/threads/${rid}`);
    problem(r, 404, [rid], `GET /threads/<unknown uuid>: `);
    out.push(`GET /threads/<unknown uuid> -> 404`);
    return out.join("; ");
  });
  await kase("wrong method: 405 with Allow", async () => {
    const out = [];
    const bad = [];
    for (const [method, p, allow] of [["DELETE", "/threads", "POST"], ["POST", "/ok", "GET"], ["GET", "/runs/wait", "POST"],
      ["PUT", `/threads/${TID}`, "GET"], ["PATCH", "/store/items", "PUT"]]) {
      const r = await req(U, p, { method, body: method === "GET" ? undefined : "{}" });
      problem(r, 405, [method], `${method} ${p}: `);
      // RFC 9110 15.5.6: "The origin server MUST generate an Allow header
      // field in a 405 response" (Starlette, under LangGraph's server, does).
      const a = r.headers.get("allow");
      out.push(`${method} ${p.replace(TID, "ID")} -> 405 ${r.text} Allow: ${a}`);
      if (!(a && a.split(/\s*,\s*/).includes(allow))) bad.push(`${method} ${p.replace(TID, "ID")}: Allow ${a}, want a list with ${allow}`);
    }
    check(bad.length === 0, `405 without an Allow header (RFC 9110 15.5.6):\n    ${bad.join("\n    ")}\n    (${out.join("; ")})`);
    return out.join("; ");
  });

  await kase("a body on GET is ignored", async () => {
    const out = [];
    const bad = [];
    for (const [p, body, good] of [
      ["/ok", "{this is not json", (r) => r.json?.ok === true],
      ["/info", '{"x": 1}', (r) => typeof r.json?.version === "string"],
      [`/threads/${TID}`, "not json either", (r) => r.json?.thread_id === TID],
      [`/threads/${TID}/state`, '{"thread_id": 5}', (r) => r.json?.values?.count === 3],
    ]) {
      const r = await getWithBody(srv.port, p, body);
      const line = `GET ${p.replace(TID, "ID")} + ${JSON.stringify(body)} -> ${r.status} ${r.text.slice(0, 120)}`;
      out.push(line);
      if (!(r.status === 200 && good(r))) bad.push(line);
    }
    // HTTP gives a GET body no meaning (RFC 9110 9.3.1); LangGraph's server ignores it.
    check(bad.length === 0, `a GET's body was not ignored:\n    ${bad.join("\n    ")}`);
    return out.join("; ");
  });

  // --- 100 MB bodies with the default limit (16M) --------------------------------
  await kase("100 MB body, default --max-body (Content-Length and chunked)", async () => {
    const big = await start("default", []);
    try {
      const out = [];
      const TOTAL = 100 * 1024 * 1024;
      for (const chunked of [false, true]) {
        const what = chunked ? "chunked" : "Content-Length";
        const r = await streamBody(big.port, "/threads", TOTAL, { chunked });
        out.push(`${what}: ${r.status ?? r.error} ${r.body} after ${r.ms} ms with ${r.writtenAtAnswer} bytes written`);
        if (!chunked) {
          // The announced size is over the limit: the 413 comes before the body is read.
          check(r.status === 413, `${what}: want 413, got ${r.status ?? r.error} ${r.body}`);
          check(/"detail":"[^"]*limit/.test(r.body), `${what}: detail should name the limit: ${r.body}`);
          check(r.writtenAtAnswer <= 32 * 1024 * 1024,
            `${what}: the 413 came only after ${r.writtenAtAnswer} of ${TOTAL} bytes had been sent`);
        } else {
          // Without a size the server reads and drops up to 4 x the limit (64 MiB; so a
          // client sending a little too much gets its 413 cleanly), then answers and closes:
          // this client, still sending, sees a 413 or its connection reset, never all 100 MB read.
          const m = /after (\d+) bytes/.exec(r.error ?? "");
          const written = r.writtenAtAnswer ?? (m ? Number(m[1]) : TOTAL);
          check(r.status === 413 || /EPIPE|ECONNRESET/.test(r.error ?? ""),
            `${what}: want 413 or a reset connection, got ${r.status ?? r.error} ${r.body}`);
          check(written <= 80 * 1024 * 1024,
            `${what}: the server read ${written} of ${TOTAL} bytes before it answered or closed (the cap is 64 MiB)`);
        }
        const ok = await req(big.url, "/ok");
        check(ok.status === 200, `${what}: GET /ok afterwards: ${short(ok)}`);
      }
      return out.join("; ");
    } finally {
      const res = await stop(big);
      if (res.timedOut || res.code !== 0) failures.push(`default-options server: SIGTERM -> ${JSON.stringify(res)}\n${big.stderr().slice(-2000)}`);
    }
  });

  // --- 10 000 idle connections -------------------------------------------------
  await kase("10 000 idle connections vs --max-connections 200 --timeout 5", async () => {
    const pid = srv.proc.pid;
    const fdBase = fdCount(pid);
    let fdMax = fdBase;
    const sampler = setInterval(() => { const n = fdCount(pid); if (n !== null) fdMax = Math.max(fdMax, n); }, 50);
    const socks = [];
    const errors = {};
    let connected = 0, emfile = false;
    const serverClosed = [];
    const tFlood = Date.now();
    for (let b = 0; b < FLOOD / 500 && !emfile; b++) {
      const batch = [];
      for (let i = 0; i < 500 && !emfile; i++) {
        batch.push(new Promise((resolve) => {
          let s;
          try { s = net.connect({ port: srv.port, host: "127.0.0.1" }); } catch (e) { errors[e.code] = (errors[e.code] ?? 0) + 1; emfile = true; resolve(); return; }
          s.on("connect", () => { connected++; s.connectedAt = Date.now(); resolve(); });
          s.on("data", () => {});
          s.on("error", (e) => {
            errors[e.code] = (errors[e.code] ?? 0) + 1;
            if (e.code === "EMFILE" || e.code === "ENFILE") emfile = true;
            resolve();
          });
          s.on("close", () => { if (!s.mine && s.connectedAt) serverClosed.push(Date.now() - s.connectedAt); });
          socks.push(s);
        }));
      }
      // Past the server's limit and the kernel's backlog a connect waits for
      // SYN retries: do not wait for those.
      await Promise.race([Promise.all(batch), sleep(300)]);
    }
    if (emfile) {
      // Out of file descriptors: give 100 back for the test's own requests.
      for (const s of socks.slice(-100)) { s.mine = true; s.destroy(); }
      await sleep(100);
    }
    const openMs = Date.now() - tFlood;
    // A request now queues behind the idle ones (reported, not asserted).
    let during;
    try {
      const r = await req(U, "/ok", { timeoutMs: 2000 });
      during = `${r.status}`;
    } catch (e) { during = `no answer in 2 s (${e.name})`; }
    // Wait for at least one generation of idle connections to be dropped (those
    // past the limit are closed at once, with a 503: not counted here).
    const tWait = Date.now();
    const idleClosed = () => serverClosed.filter((ms) => ms >= (IDLE_TIMEOUT_S - 1) * 1000).length;
    while (idleClosed() < Math.min(MAX_CONN, connected) && Date.now() - tWait < (IDLE_TIMEOUT_S * 3 + 2) * 1000) await sleep(100);
    await sleep(500);
    clearInterval(sampler);
    const closedCount = serverClosed.length;
    const atOnce = serverClosed.filter((ms) => ms < 2000).length;
    const idle = serverClosed.filter((ms) => ms >= (IDLE_TIMEOUT_S - 1) * 1000);
    const idleMax = idle.length ? Math.max(...idle) : 0;
    // Close them all; then a normal request must succeed within a few seconds.
    for (const s of socks) { s.mine = true; s.destroy(); }
    const tAfter = Date.now();
    let okAfter = null, lastErr = "";
    while (Date.now() - tAfter < 10000) {
      try {
        const r = await req(U, "/ok", { timeoutMs: 2000 });
        if (r.status === 200) { okAfter = Date.now() - tAfter; break; }
        lastErr = short(r);
      } catch (e) { lastErr = e.message; }
      await sleep(100);
    }
    let fdEnd = fdCount(pid);
    for (let i = 0; i < 50 && fdEnd !== null && fdEnd > fdBase + 5; i++) { await sleep(100); fdEnd = fdCount(pid); }
    const summary = `${socks.length} connects in ${openMs} ms (ulimit -n ${fdLimit}), ${connected} TCP-connected, errors ${JSON.stringify(errors)}; ` +
      `server fds ${fdBase} -> max ${fdMax ?? "?"} -> ${fdEnd ?? "?"}; closed by the server: ${closedCount} (${atOnce} within 2 s, ` +
      `${idle.length} idle ones after >= ${IDLE_TIMEOUT_S - 1} s, longest ${idleMax} ms); GET /ok during the flood: ${during}; ` +
      `after closing them: 200 in ${okAfter ?? "-"} ms`;
    console.log(`      ${summary}`);
    check(connected >= 2 * MAX_CONN, `only ${connected} connections could be opened (errors ${JSON.stringify(errors)}): ` +
      `not enough to pass --max-connections ${MAX_CONN}`);
    if (fdBase !== null) {
      // Past the limit, up to 64 more are accepted only to be answered 503 and
      // closed at once (docs/server.md, "Security and limits").
      check(fdMax <= fdBase + MAX_CONN + 64 + 16, `the server held ${fdMax - fdBase} more file descriptors than at rest: more than --max-connections ${MAX_CONN} + 64`);
    }
    check(idle.length >= Math.min(MAX_CONN / 2, connected),
      `the server dropped only ${idle.length} idle connections after ~${IDLE_TIMEOUT_S} s (closed by the server: ${closedCount})`);
    check(okAfter !== null && okAfter <= 5000, `GET /ok after closing the connections: ${okAfter === null ? `no 200 within 10 s (${lastErr})` : `${okAfter} ms`}`);
    if (fdBase !== null) check(fdEnd <= fdBase + 5, `the server still holds ${fdEnd - fdBase} extra file descriptors 5 s after the clients closed`);
    await survives("connection flood");
    return `idle ones dropped, GET /ok 200 ${okAfter} ms after the clients closed`;
  });

  for (const [label, p] of Object.entries(lingering)) {
    await kase(label, async () => {
      const r = await p;
      const what = label === "slowloris" ? `a header byte per second (${r.sent} bytes sent)` : "nothing sent";
      check(r.closedBy === "server",
        `${what}: still open after ${r.ms} ms; --timeout is ${IDLE_TIMEOUT_S} s: the server should close a connection ` +
        "that has not sent its request headers within the timeout");
      check(!/^HTTP\/1\.1 2/.test(r.got ?? ""), `${what}: the server answered ${JSON.stringify(r.got)}`);
      return `${what}: closed by the server after ${r.ms} ms${r.got ? ` (answer ${JSON.stringify(r.got.split("\r\n")[0])})` : ""}`;
    });
  }

  // --- auth ------------------------------------------------------------------------
  await kase("--auth-token-env: 401 without / with a wrong token, /ok open", async () => {
    const TOKEN = "s3cret-token";
    const a = await start("auth", ["--auth-token-env", "SST_BAD_INPUT_TOKEN", "--max-body", "1M"], { SST_BAD_INPUT_TOKEN: TOKEN });
    try {
      const out = [];
      const cases = [
        ["GET", "/info", {}, undefined],
        ["GET", "/info", { authorization: "Bearer wrong" }, undefined],
        ["GET", "/info", { authorization: `Bearer ${TOKEN}x` }, undefined],
        ["GET", "/info", { authorization: `Basic ${Buffer.from(`u:${TOKEN}`).toString("base64")}` }, undefined],
        ["GET", "/info", { authorization: TOKEN }, undefined],
        ["POST", "/threads", {}, "{not json"],
        ["POST", "/threads", {}, twoMB],
        ["GET", "/nope", {}, undefined],
        ["GET", `/threads/${"a".repeat(10000)}`, {}, undefined],
      ];
      for (const [method, p, headers, body] of cases) {
        const r = await req(a.url, p, { method, headers, body });
        problem(r, 401, [/[Aa]uthorization|token/], `${method} ${p.slice(0, 30)} ${JSON.stringify(headers)}: `);
        out.push(`${method} ${p.slice(0, 12)}${p.length > 12 ? "..." : ""} ${headers.authorization ? headers.authorization.split(" ")[0] : "(none)"}${body ? ` +${typeof body === "string" ? "bad JSON" : "2MB"}` : ""} -> 401`);
      }
      const ok = await req(a.url, "/ok");
      check(ok.status === 200, `GET /ok without a token: ${short(ok)}`);
      const good = await req(a.url, "/info", { headers: { authorization: `Bearer ${TOKEN}` } });
      check(good.status === 200, `GET /info with the token: ${short(good)}`);
      const sdk = new Client({ apiUrl: a.url, apiKey: null, callerOptions: { maxRetries: 0 }, defaultHeaders: { Authorization: `Bearer ${TOKEN}` } });
      const th = await sdk.threads.create();
      check(typeof th.thread_id === "string", "the SDK with the token creates a thread");
      return `${out.join(", ")}; /ok -> 200 without a token; the right token -> 200 (SDK too)`;
    } finally {
      const res = await stop(a);
      if (res.timedOut || res.code !== 0) failures.push(`auth server: SIGTERM -> ${JSON.stringify(res)}\n${a.stderr().slice(-2000)}`);
    }
  });

  // --- the end: still serving, committed data kept across a restart ------------
  await kase("after all: alive, state kept, SIGTERM exit 0, restart keeps the thread", async () => {
    await survives("the end");
    check(srv.proc.exitCode === null && srv.proc.signalCode === null, "the main server died");
    const res = await stop(srv);
    check(!res.timedOut && res.code === 0, `SIGTERM: ${JSON.stringify(res)}`);
    srv = await start("main", ["--max-body", "1M"]);
    U = srv.url;
    client = new Client({ apiUrl: U, apiKey: null, callerOptions: { maxRetries: 0 } });
    await survives("after a restart");
    const th = await client.threads.get(TID);
    check(th.metadata?.purpose === "survivor", `thread metadata after the restart: ${JSON.stringify(th.metadata)}`);
    return `GET /ok 200, count 3, SIGTERM -> exit 0, restarted: thread ${TID} still count 3`;
  });

  // ---------------------------------------------------------------------------
  for (const s of [...servers]) {
    const res = await stop(s);
    if (res.timedOut || res.code !== 0) failures.push(`${s.name} server: SIGTERM -> ${JSON.stringify(res)}`);
  }
  const secs = ((Date.now() - t0) / 1000).toFixed(1);
  if (failures.length) {
    console.error(`\nbad_input.mjs: FAIL: ${failures.length} case(s) failed in ${secs} s:\n  - ${failures.join("\n  - ")}`);
    console.error(`--- main server stderr (tail) ---\n${srv.stderr().slice(-3000)}`);
    console.error(`bad_input.mjs: files kept in ${tmp}`);
    process.exit(1);
  }
  console.log(`bad_input.mjs: OK: every case passed in ${secs} s`);
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`bad_input.mjs: kept ${tmp}`);
  process.exit(0);
}
