// Bearer-token auth and the listen-address guard of `superstep serve`. Starts
// servers of its own (SST_SUPERSTEP, set by run.mjs --superstep), so it is
// skipped when the suite runs only against a --url.
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { runServerExpectingExit, startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const CONFIG = path.join(HERE, "langgraph.json");
const SUPERSTEP = process.env.SST_SUPERSTEP;
const skip = SUPERSTEP ? false : "needs SST_SUPERSTEP (run.mjs --superstep PATH): it starts servers of its own";
const TOKEN = "secret";
const ENV = { SST_TEST_TOKEN: TOKEN };

function tmpdir(t) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "sst-auth-test-"));
  t.after?.(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}

async function stopClean(server) {
  const res = await server.stop(10000);
  assert.equal(res.timedOut, false, "the server exits within 10 s of SIGTERM");
  assert.equal(res.code, 0, `exit code after SIGTERM: ${res.code} (signal ${res.signal})\n${server.stderr()}`);
}

describe("--auth-token-env: a bearer token on every route but the open ones", { skip }, () => {
  let server;
  let dir;
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sst-auth-test-"));
    server = await startServer({
      superstep: SUPERSTEP, config: CONFIG, env: ENV,
      args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(dir, "auth.db"), "--auth-token-env", "SST_TEST_TOKEN"],
    });
  });
  after(async () => {
    if (server) await stopClean(server);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const get = (p, headers = {}) => fetch(server.url + p, { headers });
  const req = (method, p, body, headers = {}) => fetch(server.url + p, {
    method, headers: { "content-type": "application/json", ...headers }, body: body === undefined ? undefined : JSON.stringify(body),
  });

  async function check401(res, what) {
    assert.equal(res.status, 401, `${what}: want 401, got ${res.status}`);
    assert.match(res.headers.get("content-type") ?? "", /^application\/json/, `${what}: JSON body`);
    const body = await res.json();
    assert.equal(typeof body.detail, "string", `${what}: {"detail": "..."}`);
    assert.ok(body.detail.length > 0);
  }

  test("GET /ok needs no token (with or without one)", async () => {
    const r = await get("/ok");
    assert.equal(r.status, 200);
    assert.deepEqual(await r.json(), { ok: true });
    assert.equal((await get("/ok", { authorization: "Bearer wrong" })).status, 200);
  });

  test("GET /info: 401 without a token, with a wrong one or a wrong scheme; 200 with Bearer secret", async () => {
    await check401(await get("/info"), "no token");
    await check401(await get("/info", { authorization: "Bearer wrong" }), "wrong token");
    await check401(await get("/info", { authorization: "Bearer secretX" }), "token with a suffix");
    await check401(await get("/info", { authorization: "Bearer " }), "empty token");
    await check401(await get("/info", { authorization: TOKEN }), "no Bearer scheme");
    await check401(await get("/info", { authorization: `Basic ${Buffer.from(`x:${TOKEN}`).toString("base64")}` }), "Basic scheme");
    await check401(await get("/info", { "x-api-key": TOKEN }), "x-api-key instead of Authorization");
    const ok = await get("/info", { authorization: `Bearer ${TOKEN}` });
    assert.equal(ok.status, 200);
    assert.equal(typeof (await ok.json()).version, "string");
  });

  test("the web page's files need no token (they hold no data); the page's data does", async () => {
    for (const p of ["/", "/ui/index.html"]) {
      const r = await get(p);
      assert.equal(r.status, 200, `${p} without a token`);
      assert.match(r.headers.get("content-type"), /^text\/html/);
    }
    assert.equal((await get("/ui/no-such-file.js")).status, 404, "a file the page lacks: 404 (it tells nothing)");
    await check401(await get("/ui/"), "/ui/ alone");
  });

  test("every other route is 401 without the token", async () => {
    const id = "0b0e7c6e-7a4b-4d0e-9a59-2f7d1c3b2a10";
    const routes = [
      ["POST", "/assistants/search", {}],
      ["GET", "/assistants/chain"],
      ["GET", "/assistants/chain/graph"],
      ["GET", "/assistants/chain/graph.svg"],
      ["POST", "/threads", {}],
      ["POST", "/threads/search", {}],
      ["GET", `/threads/${id}`],
      ["GET", `/threads/${id}/state`],
      ["POST", `/threads/${id}/history`, {}],
      ["DELETE", `/threads/${id}`],
      ["POST", `/threads/${id}/runs/wait`, { assistant_id: "chain", input: { items: [] } }],
      ["POST", `/threads/${id}/runs/stream`, { assistant_id: "chain", input: { items: [] } }],
      ["GET", `/threads/${id}/runs`],
      ["POST", "/runs/wait", { assistant_id: "chain", input: { items: [] } }],
      ["POST", "/runs/stream", { assistant_id: "chain", input: { items: [] } }],
      ["PUT", "/store/items", { namespace: ["a"], key: "k", value: { v: 1 } }],
      ["GET", "/store/items?namespace=a&key=k"],
      ["POST", "/store/items/search", { namespace_prefix: ["a"] }],
      ["POST", "/store/namespaces", {}],
      ["GET", "/no/such/route"],
    ];
    for (const [method, p, body] of routes) {
      await check401(await req(method, p, body), `${method} ${p} without a token`);
      await check401(await req(method, p, body, { authorization: "Bearer nope" }), `${method} ${p} with a wrong token`);
    }
    // Nothing was done by the refused requests.
    const st = await req("GET", "/store/items?namespace=a&key=k", undefined, { authorization: `Bearer ${TOKEN}` });
    assert.equal(st.status, 200);
    assert.equal((await st.text()).trim(), "null", "the refused PUT stored nothing");
  });

  test("exactly GET /ok, /openapi.json, / and /ui/<file> are open: every other route /openapi.json lists is 401 without the token", async () => {
    // The list of open paths is docs/server.md's ("Security and limits").
    const OPEN = ["GET /ok", "GET /openapi.json", "GET /", "GET /ui/{file}"];
    const r = await get("/openapi.json");
    assert.equal(r.status, 200, "GET /openapi.json without a token");
    assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
    const doc = await r.json();
    assert.match(doc.openapi, /^3\./);
    assert.deepEqual(doc.security, [{ bearer: [] }], "the token is required by default");
    assert.deepEqual(doc.components.securitySchemes.bearer, { type: "http", scheme: "bearer" });
    const withToken = await get("/openapi.json", { authorization: `Bearer ${TOKEN}` });
    assert.equal(withToken.status, 200, "GET /openapi.json with the token");
    assert.deepEqual(await withToken.json(), doc);

    const id = "0b0e7c6e-7a4b-4d0e-9a59-2f7d1c3b2a10";
    const open = [];
    let checked = 0;
    for (const [pattern, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const name = `${method.toUpperCase()} ${pattern}`;
        if (op.security?.length === 0) { open.push(name); continue; }
        const p = pattern.replace("{file}", "index.html").replace(/\{[a-z_]+\}/g, id);
        await check401(await req(method.toUpperCase(), p, method === "get" || method === "delete" ? undefined : {}),
          `${name} without a token`);
        checked++;
      }
    }
    assert.deepEqual(open.sort(), [...OPEN].sort(), "the open routes");
    assert.ok(checked >= 50, `every other route (${checked}) checked`);
    for (const name of OPEN) {
      const p = name.split(" ")[1].replace("{file}", "index.html");
      assert.equal((await get(p)).status, 200, `${name} without a token`);
    }
    // A method other than GET on an open path is not open.
    await check401(await req("POST", "/ok", {}), "POST /ok without a token");
    await check401(await req("DELETE", "/"), "DELETE / without a token");
  });

  test("the SDK with defaultHeaders {Authorization: Bearer secret} works; without it, 401", async () => {
    const c = new Client({
      apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 },
      defaultHeaders: { Authorization: `Bearer ${TOKEN}` },
    });
    const t = await c.threads.create();
    assert.deepEqual(await c.runs.wait(t.thread_id, "chain", { input: { items: ["s"] } }), { items: ["s", "a", "b", "c"] });
    const chunks = [];
    for await (const x of c.runs.stream(null, "chain", { input: { items: [] }, streamMode: "updates" })) chunks.push(x.event);
    assert.deepEqual(chunks, ["metadata", "updates", "updates", "updates"]);
    assert.equal((await c.assistants.search({ graphId: "chain" })).length, 1);

    const anon = new Client({ apiUrl: server.url, apiKey: null, callerOptions: { maxRetries: 0 } });
    await assert.rejects(anon.threads.get(t.thread_id), (e) => e.status === 401);
    await assert.rejects(anon.runs.wait(null, "chain", { input: { items: [] } }), (e) => e.status === 401);
  });
});

describe("the listen address guard", { skip }, () => {
  test("--host 0.0.0.0 without --auth-token-env is refused: non-zero exit and a message", async (t) => {
    const dir = tmpdir(t);
    const r = await runServerExpectingExit({
      superstep: SUPERSTEP, config: CONFIG,
      args: ["--host", "0.0.0.0", "--port", "0", "--db", path.join(dir, "a.db")],
    });
    assert.equal(r.listening, false, `it must not listen: ${r.stdout}`);
    assert.notEqual(r.code, 0, "non-zero exit");
    assert.notEqual(r.code, null, `it exits by itself (signal ${r.signal})`);
    assert.match(r.stderr, /0\.0\.0\.0|insecure-listen-any|auth-token-env/, `the message names the problem: ${r.stderr}`);
  });

  test("a port another server listens on is refused (no silent sharing of the port)", async (t) => {
    const dir = tmpdir(t);
    const first = await startServer({
      superstep: SUPERSTEP, config: CONFIG,
      args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(dir, "p1.db")],
    });
    try {
      const r = await runServerExpectingExit({
        superstep: SUPERSTEP, config: CONFIG,
        args: ["--host", "127.0.0.1", "--port", String(first.port), "--db", path.join(dir, "p2.db")],
      });
      assert.equal(r.listening, false, `the second server must not listen: ${r.stdout}`);
      assert.notEqual(r.code, 0, "non-zero exit");
      assert.match(r.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.port}`), `names the address: ${r.stderr}`);
    } finally {
      await stopClean(first);
    }
  });

  test("--host 0.0.0.0 --insecure-listen-any is accepted", async (t) => {
    const dir = tmpdir(t);
    const s = await startServer({
      superstep: SUPERSTEP, config: CONFIG,
      args: ["--host", "0.0.0.0", "--port", "0", "--db", path.join(dir, "b.db"), "--insecure-listen-any"],
    });
    try {
      const r = await fetch(`${s.url}/ok`);
      assert.equal(r.status, 200);
      const info = await fetch(`${s.url}/info`);
      assert.equal(info.status, 200, "no token needed without --auth-token-env");
    } finally {
      await stopClean(s);
    }
  });

  test("--host 0.0.0.0 with --auth-token-env is accepted and asks for the token", async (t) => {
    const dir = tmpdir(t);
    const s = await startServer({
      superstep: SUPERSTEP, config: CONFIG, env: ENV,
      args: ["--host", "0.0.0.0", "--port", "0", "--db", path.join(dir, "c.db"), "--auth-token-env", "SST_TEST_TOKEN"],
    });
    try {
      assert.equal((await fetch(`${s.url}/ok`)).status, 200);
      assert.equal((await fetch(`${s.url}/info`)).status, 401);
      assert.equal((await fetch(`${s.url}/info`, { headers: { authorization: `Bearer ${TOKEN}` } })).status, 200);
    } finally {
      await stopClean(s);
    }
  });
});
