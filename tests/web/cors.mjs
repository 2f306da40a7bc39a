// Browsers on other origins (docs/server.md "Browsers on other origins"): headless
// Chromium on a page served from another port (and from a host name that is not loopback)
// calls `superstep serve` with fetch, reads a run's SSE stream over fetch and joins it with
// EventSource, as LangGraph's SDK and useStream do. Allowed and refused, with the default
// rules and with langgraph.json's http.cors.
//
//   node tests/web/cors.mjs --superstep build/plain/superstep
import assert from "node:assert/strict";
import fs from "node:fs";
import { parseArgs } from "../server/_server.mjs";
import { FOREIGN_HOST, launchBrowser, pageServer, runTests, serve, serveExpectingExit, tmpDir, writeConfig } from "./_origin.mjs";

const opts = parseArgs("cors.mjs", "node tests/web/cors.mjs --superstep BIN [--keep]");
const tmp = tmpDir();
const page0 = await pageServer("<!doctype html><title>front end</title><p>a front end on another origin</p>");
const browser = await launchBrowser();
const servers = [];

async function server(name, cfg, args = [], env = {}) {
  const s = await serve(opts.superstep, writeConfig(tmp, name, cfg), tmp, args, env);
  servers.push(s);
  return s;
}

// A page on origin `origin` (http://HOST:page0.port) in a fresh context.
async function pageAt(host) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  await page.goto(`http://${host}:${page0.port}/`, { waitUntil: "domcontentloaded" });
  return { page, ctx };
}

// In the page: create a thread, stream a run of `counter` over fetch (SSE), read
// Content-Location, then join the finished run with EventSource. Returns what it saw,
// or {error} when the browser refused.
async function drive(page, api, extraHeaders = {}) {
  return page.evaluate(async (api, extraHeaders) => {
    const out = {};
    try {
      const th = await fetch(`${api}/threads`, { method: "POST", headers: { "content-type": "application/json", ...extraHeaders }, body: "{}" });
      out.threadStatus = th.status;
      const thread = await th.json();
      const res = await fetch(`${api}/threads/${thread.thread_id}/runs/stream`, {
        method: "POST",
        headers: { "content-type": "application/json", ...extraHeaders },
        body: JSON.stringify({ assistant_id: "counter", input: { n: 3 }, stream_mode: ["values"] }),
      });
      out.contentLocation = res.headers.get("content-location");
      const reader = res.body.getReader();
      const dec = new TextDecoder();
      let text = "";
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        text += dec.decode(value, { stream: true });
      }
      out.events = [...text.matchAll(/^event: (.*)$/gm)].map((m) => m[1]);
      out.counts = [...text.matchAll(/^data: (\{.*"count".*\})$/gm)].map((m) => JSON.parse(m[1]).count);
      const runId = /\/runs\/([0-9a-f-]+)/.exec(out.contentLocation || "")?.[1];
      out.joined = await new Promise((resolve) => {
        const es = new EventSource(`${api}/threads/${thread.thread_id}/runs/${runId}/stream`);
        const seen = [];
        es.addEventListener("values", (e) => seen.push(JSON.parse(e.data).count));
        es.addEventListener("metadata", () => seen.push("metadata"));
        es.onerror = () => { es.close(); resolve(seen); }; // the stream ends: the server closes it
      });
    } catch (e) {
      out.error = String(e);
    }
    return out;
  }, api, extraHeaders);
}

// A preflight as a browser sends it, from Node.
async function preflight(api, origin, method = "POST", headers = "content-type") {
  const res = await fetch(`${api}/threads`, { method: "OPTIONS", headers: { origin, "access-control-request-method": method, "access-control-request-headers": headers } });
  return { status: res.status, headers: Object.fromEntries(res.headers), body: await res.text() };
}

const tests = [
  ["default rules: a loopback origin on another port streams and joins", async () => {
    const api = (await server("default", {})).url;
    const { page, ctx } = await pageAt("127.0.0.1");
    const got = await drive(page, api);
    await ctx.close();
    assert.equal(got.error, undefined, JSON.stringify(got));
    assert.equal(got.threadStatus, 200);
    assert.match(got.contentLocation, /^\/threads\/[0-9a-f-]+\/runs\/[0-9a-f-]+$/);
    assert.deepEqual(got.events, ["metadata", "values", "values", "values", "values"]);
    assert.deepEqual(got.counts, [0, 1, 2, 3]);
    assert.deepEqual(got.joined, ["metadata", 0, 1, 2, 3]);
    const pf = await preflight(api, `http://localhost:${page0.port}`);
    assert.equal(pf.status, 200);
    assert.equal(pf.headers["access-control-allow-origin"], `http://localhost:${page0.port}`);
    assert.match(pf.headers["access-control-allow-methods"], /POST/);
    assert.equal(pf.headers["access-control-allow-headers"], "content-type");
    assert.equal(pf.headers["access-control-max-age"], "600");
  }],
  ["default rules: a page on a site that is not loopback is refused", async () => {
    const api = servers[0].url;
    const { page, ctx } = await pageAt(FOREIGN_HOST);
    const got = await drive(page, api);
    await ctx.close();
    assert.match(got.error || "", /Failed to fetch/, JSON.stringify(got));
    const pf = await preflight(api, `http://${FOREIGN_HOST}:${page0.port}`);
    assert.equal(pf.status, 400);
    assert.equal(pf.headers["access-control-allow-origin"], undefined);
    assert.match(JSON.parse(pf.body).detail, /Disallowed CORS origin: http:\/\/elsewhere\.test/);
    // A plain GET from that origin is answered without the header (the browser hides it).
    const res = await fetch(`${api}/ok`, { headers: { origin: `http://${FOREIGN_HOST}:${page0.port}` } });
    assert.equal(res.headers.get("access-control-allow-origin"), null);
  }],
  ["http.cors: the origins listed, with credentials, exposed headers and max_age", async () => {
    const foreign = `http://${FOREIGN_HOST}:${page0.port}`;
    const api = (await server("listed", {
      http: { cors: { allow_origins: [foreign], allow_methods: ["GET", "POST"], allow_headers: ["Content-Type", "X-Front-End"], allow_credentials: true, expose_headers: ["X-Pagination-Total"], max_age: 42 } },
    })).url;
    const a = await pageAt(FOREIGN_HOST);
    const got = await drive(a.page, api, { "x-front-end": "1" });
    await a.ctx.close();
    assert.equal(got.error, undefined, JSON.stringify(got));
    assert.deepEqual(got.counts, [0, 1, 2, 3]);
    assert.deepEqual(got.joined, ["metadata", 0, 1, 2, 3]);
    assert.ok(got.contentLocation, "Content-Location stays exposed");
    const pf = await preflight(api, foreign, "POST", "content-type,x-front-end");
    assert.equal(pf.status, 200);
    assert.equal(pf.headers["access-control-allow-origin"], foreign);
    assert.equal(pf.headers["access-control-allow-credentials"], "true");
    assert.equal(pf.headers["access-control-allow-methods"], "GET, POST");
    assert.equal(pf.headers["access-control-allow-headers"], "Content-Type, X-Front-End");
    assert.equal(pf.headers["access-control-max-age"], "42");
    const res = await fetch(`${api}/ok`, { headers: { origin: foreign } });
    assert.equal(res.headers.get("access-control-expose-headers"), "Content-Location, X-Pagination-Total");
    assert.equal(res.headers.get("vary"), "Origin");
    // Not listed: loopback (the default is replaced), a method, a header.
    const b = await pageAt("127.0.0.1");
    const refused = await drive(b.page, api);
    await b.ctx.close();
    assert.match(refused.error || "", /Failed to fetch/, JSON.stringify(refused));
    assert.match(JSON.parse((await preflight(api, foreign, "DELETE")).body).detail, /Disallowed CORS method: DELETE/);
    assert.match(JSON.parse((await preflight(api, foreign, "POST", "content-type,x-other")).body).detail, /Disallowed CORS header: x-other/);
  }],
  ["http.cors: any origin, a regex, and a token that preflights do not need", async () => {
    const api = (await server("star", { http: { cors: { allow_origins: ["*"] } } }, ["--auth-token-env", "SST_CORS_TOKEN"], { SST_CORS_TOKEN: "s3cret" })).url;
    const pf = await preflight(api, "https://anything.example");
    assert.equal(pf.status, 200);
    assert.equal(pf.headers["access-control-allow-origin"], "*");
    // The 401 is readable by the page (it carries the header), and with the token it works.
    const { page, ctx } = await pageAt(FOREIGN_HOST);
    const denied = await page.evaluate(async (api) => (await fetch(`${api}/threads/search`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" })).status, api);
    const got = await drive(page, api, { authorization: "Bearer s3cret" });
    await ctx.close();
    assert.equal(denied, 401);
    assert.equal(got.error, undefined, JSON.stringify(got));
    assert.deepEqual(got.counts, [0, 1, 2, 3]);
    const re = (await server("regex", { http: { cors: { allow_origin_regex: "https://[a-z]+\\.example\\.com" } } })).url;
    assert.equal((await preflight(re, "https://app.example.com")).status, 200);
    assert.equal((await preflight(re, "https://app.example.com.evil")).status, 400);
    assert.equal((await preflight(re, "http://localhost:3000")).status, 400);
  }],
  ["http.cors: a bad member stops the start, naming it", async () => {
    for (const [cors, re] of [
      [{ allow_origin: ["x"] }, /unknown member http\.cors\.allow_origin\b/],
      [{ allow_origins: "http://x" }, /http\.cors\.allow_origins must be a list of strings/],
      [{ max_age: -1 }, /http\.cors\.max_age must be/],
      [{ allow_origin_regex: "(" }, /http\.cors\.allow_origin_regex is not/],
      [{ allow_credentials: "yes" }, /http\.cors\.allow_credentials must be true or false/],
    ]) {
      const r = await serveExpectingExit(opts.superstep, writeConfig(tmp, "bad", { http: { cors } }));
      assert.equal(r.listening, false, JSON.stringify(cors));
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, re);
    }
  }],
];

await runTests(tests, async () => {
  await browser.close().catch(() => {});
  let bad = false;
  for (const s of servers) {
    const st = await s.stop(10000);
    if (st.timedOut || st.code !== 0) {
      bad = true;
      console.log(`not ok - server exit ${JSON.stringify(st)}\n${s.stderr().slice(-1500)}`);
    }
  }
  await page0.close();
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  return bad;
});
