// langgraph.json's members beyond graphs and env (docs/server.md "langgraph.json"): each
// one applied has a case that fails when it is ignored; unknown and refused ones stop the
// start naming them; the build's members are named in a warning. Also POST /threads/prune.
//
//   node tests/server/config.mjs --superstep build/plain/superstep [--keep]
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { parseArgs, startServer, runServerExpectingExit } from "./_server.mjs";
import { repo, runTests, tmpDir, writeConfig } from "../web/_origin.mjs";

const opts = parseArgs("config.mjs", "node tests/server/config.mjs --superstep BIN [--keep]");
const tmp = tmpDir();
const servers = [];
const lsan = process.env.LSAN_OPTIONS ? {} : { LSAN_OPTIONS: `suppressions=${path.join(repo, "tests/lsan.supp")}:print_suppressions=0` };

async function serve(name, cfg, { db = ":memory:", env = {} } = {}) {
  const s = await startServer({
    superstep: opts.superstep, config: writeConfig(tmp, name, cfg), env: { ...lsan, ...env }, timeoutMs: 30000,
    args: ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", "2"],
  });
  servers.push(s);
  return s;
}
async function stop(s) {
  const st = await s.stop(10000);
  assert.equal(st.code, 0, `server exit ${JSON.stringify(st)}: ${s.stderr().slice(-1500)}`);
}
async function api(s, method, p, body) {
  const res = await fetch(s.url + p, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const txt = await res.text();
  return { status: res.status, body: txt ? JSON.parse(txt) : null };
}
// Resolves once the server's stderr matches re (it logs what it does), or fails after ms.
async function waitLog(s, re, ms = 30000) {
  const t0 = Date.now();
  while (!re.test(s.stderr())) {
    if (Date.now() - t0 > ms) throw new Error(`no log line ${re} within ${ms} ms; stderr:\n${s.stderr().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
async function refused(cfg, re) {
  const r = await runServerExpectingExit({ superstep: opts.superstep, config: writeConfig(tmp, "refused", cfg), env: lsan, args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:"] });
  assert.equal(r.listening, false, `started with ${JSON.stringify(cfg)}`);
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, re);
}
// A thread of `counter` run to n (n + 2 checkpoints).
async function counted(s, n) {
  const th = (await api(s, "POST", "/threads", {})).body;
  const run = await api(s, "POST", `/threads/${th.thread_id}/runs/wait`, { assistant_id: "counter", input: { n }, config: { recursion_limit: 200 } });
  assert.equal(run.status, 200, JSON.stringify(run.body));
  return th.thread_id;
}
const historyLength = async (s, id) => (await api(s, "POST", `/threads/${id}/history`, { limit: 100 })).body.length;

const tests = [
  ["unknown and refused members stop the start, naming them", async () => {
    await refused({ graph: {} }, /unknown member "graph"/);
    await refused({ auth: { path: "./auth.py:auth" } }, /auth: "path" names a Python auth file \(\.\/auth\.py:auth\): superstep does not run LangGraph's Python Auth handlers.*a Lua file/);
    await refused({ auth: { path: "./auth.py" } }, /names a Python auth file \(\.\/auth\.py\)/);
    // Only a .py file is Python: a Lua file whose name holds ".py" is loaded (here: missing).
    const lua = await runServerExpectingExit({ superstep: opts.superstep, config: writeConfig(tmp, "refused", { auth: { path: "./my.pyrate.lua" } }), env: lsan, args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:"] });
    assert.equal(lua.listening, false);
    assert.match(lua.stderr, /my\.pyrate\.lua/);
    assert.doesNotMatch(lua.stderr, /Python auth file/);
    await refused({ auth: { jwt: { algorithm: "none" } } }, /auth: jwt "algorithm" must be/);
    await refused({ auth: { jwt: { algorithm: "HS256" }, apikeys: "k" } }, /auth: unknown member "apikeys" \(path, jwt, api_keys, admin_permission\)/);
    await refused({ encryption: { path: "./e.py:e" } }, /"encryption": at-rest encryption/);
    await refused({ http: { app: "./app.py:app" } }, /http\.app must name a Lua script of routes .* a Python or JS app/);
    await refused({ http: { mount_prefix: "/api" } }, /http\.mount_prefix is not supported/);
    await refused({ http: { disable_runs: "yes" } }, /http\.disable_runs must be true or false/);
    await refused({ checkpointer: { path: "./cp.py:make" } }, /checkpointer\.path \(a custom checkpointer\) is not supported/);
    await refused({ checkpointer: { ttl: { strategy: "archive", default_ttl: 5 } } }, /checkpointer\.ttl\.strategy must be "delete" or "keep_latest"/);
    await refused({ checkpointer: { ttl: { default_tll: 5 } } }, /unknown member checkpointer\.ttl\.default_tll/);
    await refused({ store: { index: { embed: "openai:text-embedding-3-small" } } }, /store\.index\.dims is required/);
    await refused({ store: { index: { dims: 8, embed: "./embed.py:fn" } } }, /store\.index\.embed '\.\/embed\.py:fn' is not supported/);
    await refused({ store: { ttl: { default_ttl: 5, sweep: 1 } } }, /unknown member store\.ttl\.sweep/);
  }],
  ["the build's members are named in a warning and the server starts", async () => {
    const s = await serve("build", { dependencies: ["."], python_version: "3.12", dockerfile_lines: [] });
    await waitLog(s, /"dependencies" is for LangGraph's Docker build; superstep serve ignores it/);
    assert.match(s.stderr(), /"python_version" is for LangGraph's Docker build/);
    await stop(s);
  }],
  ["http.disable_*: the groups removed answer 404, the rest serves", async () => {
    const s = await serve("disabled", { http: { disable_assistants: true, disable_meta: true, disable_store: true, disable_ui: true, disable_mcp: true, disable_a2a: true } });
    assert.equal((await api(s, "POST", "/assistants/search", {})).status, 404);
    assert.equal((await api(s, "GET", "/assistants/counter")).status, 404);
    assert.equal((await api(s, "GET", "/openapi.json")).status, 404);
    assert.equal((await api(s, "GET", "/info")).status, 404);
    assert.equal((await api(s, "POST", "/store/items/search", {})).status, 404);
    assert.equal((await fetch(s.url + "/")).status, 404);
    assert.equal((await api(s, "GET", "/ok")).status, 200);
    const id = await counted(s, 2); // threads and runs still serve
    assert.equal(await historyLength(s, id), 4);
    await stop(s);
    const r = await serve("noruns", { http: { disable_runs: true, disable_threads: true } });
    assert.equal((await api(r, "POST", "/runs/wait", { assistant_id: "counter", input: {} })).status, 404);
    assert.equal((await api(r, "POST", "/threads", {})).status, 404);
    assert.equal((await api(r, "POST", "/threads/00000000-0000-0000-0000-000000000000/runs/wait", {})).status, 404);
    assert.equal((await api(r, "POST", "/assistants/search", {})).status, 200);
    await stop(r);
  }],
  ["http.app: Lua routes beside the API (params, query, body, status, text), tried before it", async () => {
    fs.writeFileSync(path.join(tmp, "routes.lua"), `
local count = 0
return {
  ["GET /hello/{name}"] = function(req) count = count + 1; return { greeting = "hello " .. req.params.name, n = count, q = req.query.x } end,
  ["POST /echo"] = function(req) return { status = 201, body = { got = req.body, method = req.method } } end,
  ["GET /plain"] = function() return { status = 200, text = "just text" } end,
  ["GET /nothing"] = function() return nil end,
  ["GET /boom"] = function() error("the route broke") end,
  ["GET /info"] = function() return { mine = true } end,
}`);
    const s = await serve("app", { http: { app: "./routes.lua" } });
    assert.deepEqual((await api(s, "GET", "/hello/ada?x=1")).body, { greeting: "hello ada", n: 1, q: "1" });
    assert.deepEqual((await api(s, "GET", "/hello/bob")).body, { greeting: "hello bob", n: 2 }, "one Lua state keeps its upvalues");
    // Many at once (two HTTP threads): one call at a time on the one Lua state, none lost.
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => api(s, "GET", `/hello/p${i}`)));
    assert.deepEqual(burst.map((b) => b.body.n).sort((a, b) => a - b), Array.from({ length: 20 }, (_, i) => i + 3));
    assert.deepEqual(await api(s, "POST", "/echo", { a: [1, 2] }), { status: 201, body: { got: { a: [1, 2] }, method: "POST" } });
    const plain = await fetch(s.url + "/plain");
    assert.equal(await plain.text(), "just text");
    assert.match(plain.headers.get("content-type"), /text\/plain/);
    assert.equal((await fetch(s.url + "/nothing")).status, 204);
    const boom = await api(s, "GET", "/boom");
    assert.equal(boom.status, 500);
    assert.match(boom.body.detail, /http\.app route GET \/boom failed: .*the route broke/);
    assert.deepEqual((await api(s, "GET", "/info")).body, { mine: true }, "a custom route overrides the API's");
    assert.equal((await api(s, "POST", "/threads", {})).status, 200, "the API serves beside it");
    await stop(s);
    fs.writeFileSync(path.join(tmp, "bad_routes.lua"), `return { ["FETCH /x"] = function() end }`);
    await refused({ http: { app: "./bad_routes.lua" } }, /route 'FETCH \/x' must be "METHOD \/path"/);
    fs.writeFileSync(path.join(tmp, "broken.lua"), `return {`);
    await refused({ http: { app: "./broken.lua" } }, /http\.app .*broken\.lua/);
  }],
  ["http.disable_webhooks: runs go on, their webhooks are not sent", async () => {
    let hits = 0;
    const hook = http.createServer((req, res) => { hits++; res.end("ok"); });
    await new Promise((r) => hook.listen(0, "127.0.0.1", r));
    const url = `http://127.0.0.1:${hook.address().port}/hook`;
    const on = await serve("hooks-on", {});
    await api(on, "POST", "/runs/wait", { assistant_id: "counter", input: { n: 1 }, webhook: url });
    const t0 = Date.now();
    while (hits === 0 && Date.now() - t0 < 30000) await new Promise((r) => setTimeout(r, 50));
    assert.equal(hits, 1, "the control server sends its webhook");
    await stop(on);
    const off = await serve("hooks-off", { http: { disable_webhooks: true } });
    const run = await api(off, "POST", "/runs/wait", { assistant_id: "counter", input: { n: 1 }, webhook: url });
    assert.equal(run.status, 200);
    await waitLog(off, /webhook not sent \(http\.disable_webhooks\)/);
    assert.equal(hits, 1);
    await stop(off);
    await new Promise((r) => hook.close(r));
  }],
  ["POST /threads/prune: delete and keep_latest, pruned_count, bad input", async () => {
    const s = await serve("prune", {});
    // 72 checkpoints: a snapshot every 64, the rest deltas; the latest needs its chain (8).
    const a = await counted(s, 70), b = await counted(s, 3), c = await counted(s, 2);
    assert.equal(await historyLength(s, a), 72);
    const kept = await api(s, "POST", "/threads/prune", { thread_ids: [a, b], strategy: "keep_latest" });
    assert.deepEqual(kept, { status: 200, body: { pruned_count: 2 } });
    assert.equal(await historyLength(s, a), 8);
    assert.deepEqual((await api(s, "GET", `/threads/${a}/state`)).body.values, { n: 70, count: 70 });
    const gone = await api(s, "POST", "/threads/prune", { thread_ids: [c, "00000000-0000-4000-8000-000000000000"] });
    assert.deepEqual(gone, { status: 200, body: { pruned_count: 1 } });
    assert.equal((await api(s, "GET", `/threads/${c}`)).status, 404);
    assert.match((await api(s, "POST", "/threads/prune", { thread_ids: [a], strategy: "archive" })).body.detail, /strategy/);
    assert.match((await api(s, "POST", "/threads/prune", { thread_ids: ["nope"] })).body.detail, /thread_ids\[0\]/);
    assert.match((await api(s, "POST", "/threads/prune", {})).body.detail, /thread_ids/);
    await stop(s);
  }],
  ["checkpointer.ttl: keep_latest, then delete, threads idle past default_ttl; a thread's own TTL rules it", async () => {
    const db = path.join(tmp, "cpttl.db");
    const a = await serve("cpttl-a", {}, { db });
    const x = await counted(a, 70), y = await counted(a, 70);
    assert.equal((await api(a, "PATCH", `/threads/${y}`, { ttl: { strategy: "delete", ttl: 1000 } })).status, 200);
    await stop(a);
    const env = { SST_SERVE_TTL_CLOCK_OFFSET_MS: String(61 * 60000) }; // 61 minutes on
    const b = await serve("cpttl-b", { checkpointer: { ttl: { strategy: "keep_latest", default_ttl: 60, sweep_interval_minutes: 1 } } }, { db, env });
    await waitLog(b, /checkpointer\.ttl sweep done: 1 thread pruned/);
    assert.match(b.stderr(), new RegExp(`pruned thread ${x}`));
    assert.equal(await historyLength(b, x), 8);
    assert.equal(await historyLength(b, y), 72, "its own TTL (1000 minutes) keeps it whole");
    await stop(b);
    const c = await serve("cpttl-c", { checkpointer: { ttl: { strategy: "delete", default_ttl: 60 } } }, { db, env });
    await waitLog(c, /checkpointer\.ttl sweep done: 1 thread deleted/);
    assert.equal((await api(c, "GET", `/threads/${x}`)).status, 404);
    assert.equal((await api(c, "GET", `/threads/${y}`)).status, 200);
    await stop(c);
  }],
  ["store.index: the API's store searches by meaning through the configured embedder", async () => {
    const fake = spawn("/usr/bin/python3", [path.join(repo, "tests/agent/openai_server.py")], { stdio: ["ignore", "pipe", "inherit"] });
    const port = await new Promise((resolve) => fake.stdout.once("data", (d) => resolve(String(d).trim().split("\n")[0])));
    try {
      const base = `http://127.0.0.1:${port}/v1`;
      const s = await serve("index", { store: { index: { embed: "openai:embed", dims: 8, fields: ["text"] } } }, { env: { OPENAI_BASE_URL: base, OPENAI_API_KEY: "k" } });
      for (const [key, text] of [["a", "apples are red"], ["b", "the sea is deep"], ["c", "pears are green"]]) {
        assert.equal((await api(s, "PUT", "/store/items", { namespace: ["docs"], key, value: { text, other: "ignored" } })).status, 204);
      }
      const found = (await api(s, "POST", "/store/items/search", { namespace_prefix: ["docs"], query: "the sea is deep", limit: 3 })).body.items;
      assert.equal(found[0].key, "b");
      assert.ok(Math.abs(found[0].score - 1) < 1e-5, JSON.stringify(found));
      const stats = await (await fetch(`${base}/embeddings/stats`, { method: "POST", body: JSON.stringify({ of: "embed" }) })).json();
      assert.equal(stats.requests, 4); // three puts, one query
      await stop(s);
      const plain = await serve("noindex", {});
      await api(plain, "PUT", "/store/items", { namespace: ["docs"], key: "b", value: { text: "the sea is deep" } });
      const unranked = (await api(plain, "POST", "/store/items/search", { namespace_prefix: ["docs"], query: "the sea is deep" })).body.items;
      assert.equal(unranked[0].score ?? null, null);
      await stop(plain);
    } finally {
      fake.kill();
    }
  }],
  ["store.ttl: items put under default_ttl expire; without it they stay", async () => {
    const db = path.join(tmp, "storettl.db");
    const a = await serve("sttl-a", { store: { ttl: { default_ttl: 60 } } }, { db });
    await api(a, "PUT", "/store/items", { namespace: ["n"], key: "short", value: { v: 1 } });
    await stop(a);
    const b = await serve("sttl-b", {}, { db });
    await api(b, "PUT", "/store/items", { namespace: ["n"], key: "long", value: { v: 2 } });
    await stop(b);
    const env = { SST_SERVE_TTL_CLOCK_OFFSET_MS: String(61 * 60000) };
    const c = await serve("sttl-c", { store: { ttl: { default_ttl: 60 } } }, { db, env });
    const short = await api(c, "GET", "/store/items?namespace=n&key=short");
    assert.ok(short.status === 404 || short.body === null, JSON.stringify(short));
    assert.equal((await api(c, "GET", "/store/items?namespace=n&key=long")).body.value.v, 2);
    await stop(c);
  }],
];

await runTests(tests, async () => {
  for (const s of servers) await s.stop(10000); // each test stops (and checks) its own
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
});
