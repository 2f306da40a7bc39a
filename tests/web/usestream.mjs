// A React front end on LangGraph's useStream (@langchain/langgraph-sdk/react, pinned in
// package.json with React and esbuild; built here, offline) served from another origin
// than the API, in headless Chromium, against `superstep serve` (docs/web.md "Front ends on
// LangGraph's SDK"): it sends a question to the `chat` agent, sees the reply's tokens stream
// into the page, the tool call the run stopped before (interruptBefore), approves it, sees
// the final answer streamed; a reload reopens the thread from the server.
//
//   node tests/web/usestream.mjs --superstep build/plain/superstep
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "../server/_server.mjs";
import { here, launchBrowser, runTests, serve, tmpDir, writeConfig } from "./_origin.mjs";

const opts = parseArgs("usestream.mjs", "node tests/web/usestream.mjs --superstep BIN [--keep]");
const WAIT = Number(process.env.SST_WEB_WAIT_MS) || 20000;
const tmp = tmpDir();

const esbuildEntry = path.join(here, "node_modules/esbuild/lib/main.js");
if (!fs.existsSync(esbuildEntry)) throw new Error("tests/web/node_modules has no esbuild: npm ci --prefix tests/web");
const esbuild = (await import(pathToFileURL(esbuildEntry).href)).default;
const built = await esbuild.build({
  entryPoints: [path.join(here, "usestream/app.jsx")],
  bundle: true, write: false, format: "esm", jsx: "automatic", minify: true, logLevel: "silent",
  define: { "process.env.NODE_ENV": '"production"' },
});
const bundle = built.outputFiles[0].text;

// The front end's own origin: the page and its bundle.
const site = http.createServer((req, res) => {
  if (req.url.startsWith("/app.js")) {
    res.writeHead(200, { "content-type": "text/javascript" });
    return res.end(bundle);
  }
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end('<!doctype html><meta charset="utf-8"><title>front end</title><div id="root"></div><script type="module" src="/app.js"></script>');
});
await new Promise((r) => site.listen(0, "127.0.0.1", r));
// One worker: the scripted model replays its replies in order per worker's copy of the
// script, so both runs of the exchange must meet the same copy.
const server = await serve(opts.superstep, writeConfig(tmp, "usestream", {}, ["chat"]), tmp, ["--workers", "1"]);
const browser = await launchBrowser();
const ctx = await browser.createBrowserContext();
const page = await ctx.newPage();
const errors = [];
page.on("pageerror", (e) => errors.push(e.message));
page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
const front = `http://127.0.0.1:${site.address().port}/?api=${encodeURIComponent(server.url)}`;

const messages = () => page.$$eval("[data-testid=message]", (els) => els.map((e) => ({
  type: e.dataset.type, id: e.dataset.id, content: e.querySelector("[data-testid=content]").textContent,
  calls: [...e.querySelectorAll("[data-testid=tool-call]")].map((c) => c.textContent),
})));
const waitFor = (fn, ...args) => page.waitForFunction(fn, { timeout: WAIT, polling: 50 }, ...args);
const noErrors = () => assert.deepEqual(errors, [], "no error in the page");

let threadId, firstIds;
const tests = [
  ["send: the reply's tokens stream in, the run stops before the tool call", async () => {
    await page.goto(front, { waitUntil: "domcontentloaded" });
    await page.waitForSelector("[data-testid=send]:not([disabled])", { timeout: WAIT });
    await page.click("[data-testid=send]");
    await page.waitForSelector("[data-testid=approve]", { timeout: WAIT }).catch(async (e) => {
      throw new Error(`${e.message}; the page shows ${JSON.stringify(await messages())}, status ${await page.$eval("[data-testid=status]", (x) => x.textContent)}, errors ${JSON.stringify(errors)}, ${await page.$eval("main", (x) => x.textContent)}`);
    });
    const msgs = await messages();
    assert.deepEqual(msgs.map((m) => m.type), ["human", "ai"]);
    assert.equal(msgs[0].content, "What is 2 + 40?");
    assert.equal(msgs[1].content, "Let me add them up.");
    assert.deepEqual(msgs[1].calls, ['add({"a":2,"b":40})']);
    const seen = await page.evaluate((id) => window.__seen[id], msgs[1].id);
    assert.ok(seen.length >= 3 && seen[0].length < seen.at(-1).length, `the reply grew token by token: ${JSON.stringify(seen)}`);
    threadId = await page.$eval("[data-testid=thread]", (e) => e.textContent);
    assert.match(threadId, /^[0-9a-f-]{36}$/);
    const st = await (await fetch(`${server.url}/threads/${threadId}/state`)).json();
    assert.deepEqual(st.next, ["tool"], "the thread waits before its tool node");
    noErrors();
  }],
  ["approve: the tool runs, the final answer streams in", async () => {
    await page.click("[data-testid=approve]");
    await waitFor(() => [...document.querySelectorAll("[data-testid=message]")].some((e) => e.textContent.includes("The answer is 42.")) &&
      document.querySelector("[data-testid=status]").textContent === "idle");
    const msgs = await messages();
    assert.deepEqual(msgs.map((m) => m.type), ["human", "ai", "tool", "ai"], JSON.stringify(msgs));
    assert.equal(msgs[2].content, "42");
    const seen = await page.evaluate((id) => window.__seen[id], msgs[3].id);
    assert.ok(seen.length >= 3, `the answer grew token by token: ${JSON.stringify(seen)}`);
    assert.equal(seen.at(-1), "The answer is 42.");
    firstIds = msgs.map((m) => m.id);
    noErrors();
  }],
  ["reload: the page reopens the thread from the server", async () => {
    await page.reload({ waitUntil: "domcontentloaded" });
    await waitFor(() => document.querySelectorAll("[data-testid=message]").length === 4);
    const msgs = await messages();
    assert.deepEqual(msgs.map((m) => m.id), firstIds);
    assert.equal(msgs[3].content, "The answer is 42.");
    assert.equal(await page.$eval("[data-testid=thread]", (e) => e.textContent), threadId);
    noErrors();
  }],
];

await runTests(tests, async () => {
  await browser.close().catch(() => {});
  const st = await server.stop(10000);
  const bad = st.timedOut || st.code !== 0;
  if (bad) console.log(`not ok - server exit ${JSON.stringify(st)}\n${server.stderr().slice(-1500)}`);
  await new Promise((r) => site.close(r));
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  return bad;
});
