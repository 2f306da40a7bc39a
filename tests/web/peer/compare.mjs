// test_web_usestream_peer: the useStream page of test_web_usestream (tests/web/usestream/app.jsx,
// unchanged) run against `superstep serve` (the `chat` agent) and against LangGraph.js's own
// dev server (@langchain/langgraph-api 1.5.1 through @langchain/langgraph-cli, pinned in
// package.json / package-lock.json as in /work/shared/peers/langgraphjs-server; the twin agent
// is chat.ts), the same steps in headless Chromium: send, the reply's tokens, the tool call
// the run stopped before (interruptBefore), Approve, the final answer, reload. It records what
// the page showed, every SSE event the page read (fetch is wrapped before the page loads), the
// thread's state while interrupted and at the end, then compares the two servers fact by
// fact. A fact that differs must be one of KNOWN (each with its reason, documented in
// docs/web.md "Against LangGraph.js's own server"); an unexpected difference fails, and so
// does a known one that went away (the docs would be wrong).
//
//   node tests/web/peer/compare.mjs --superstep build/plain/superstep [--keep]
//
// Skipped (exit 77, the reason printed) only when tests/web/peer/node_modules is not installed
// (npm ci --prefix tests/web/peer); nothing is downloaded at test time.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs } from "../../server/_server.mjs";

const peerDir = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(peerDir, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs");
if (!fs.existsSync(cli) || !fs.existsSync(path.join(peerDir, "node_modules/@langchain/langgraph-api"))) {
  console.log("skip: tests/web/peer/node_modules has no @langchain/langgraph-cli / -api (npm ci --prefix tests/web/peer)");
  process.exit(77);
}
const { here, launchBrowser, serve, tmpDir, writeConfig } = await import("../_origin.mjs");

const opts = parseArgs("compare.mjs", "node tests/web/peer/compare.mjs --superstep BIN [--keep]");
const WAIT = Number(process.env.SST_WEB_WAIT_MS) || 20000;
const tmp = tmpDir();

// ---- the differences found, each documented in docs/web.md with its reason ----
const KNOWN = {
  "stream.messages.chunk":
    "a streamed token's message: superstep sends {content, type: \"AIMessageChunk\", id} (the type named as LangGraph's Python server names it), LangGraph.js the whole chunk with type \"ai\" (additional_kwargs, response_metadata, tool_calls, tool_call_chunks...), its last chunk carrying the tool call as tool_call_chunks",
  "stream.messages.metadata":
    "a streamed token's metadata: {} from superstep, the task's metadata (langgraph_node, langgraph_step, ...) from LangGraph.js",
  "stream.values.more-keys":
    "superstep's prebuilt agent has channels of its own (full_messages, last_response, scratchpad, tools, context, max_iterations) beside messages and iteration, and values shows them",
  "state.message.members":
    "superstep's messages carry role beside type (\"user\" on the human message that came with type only) and its AI message's tool calls keep OpenAI's type/function beside LangChain's name/args/id",
};

// ---- the page, built once (the same bundle for both servers) ----
const esbuildEntry = path.join(here, "node_modules/esbuild/lib/main.js");
if (!fs.existsSync(esbuildEntry)) throw new Error("tests/web/node_modules has no esbuild: npm ci --prefix tests/web");
const esbuild = (await import(pathToFileURL(esbuildEntry).href)).default;
const built = await esbuild.build({
  entryPoints: [path.join(here, "usestream/app.jsx")],
  bundle: true, write: false, format: "esm", jsx: "automatic", minify: true, logLevel: "silent",
  define: { "process.env.NODE_ENV": '"production"' },
});
const bundle = built.outputFiles[0].text;
const site = http.createServer((req, res) => {
  if (req.url.startsWith("/app.js")) {
    res.writeHead(200, { "content-type": "text/javascript" });
    return res.end(bundle);
  }
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end('<!doctype html><meta charset="utf-8"><title>front end</title><div id="root"></div><script type="module" src="/app.js"></script>');
});
await new Promise((r) => site.listen(0, "127.0.0.1", r));

// ---- LangGraph.js's dev server, offline, state in the temporary directory ----
const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer();
  s.on("error", reject);
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});

async function startPeer() {
  const dir = path.join(tmp, "peer");
  fs.mkdirSync(dir);
  // The config in the temporary directory, so that the server's .langgraph_api/ goes there.
  const config = path.join(dir, "langgraph.json");
  fs.writeFileSync(config, JSON.stringify({ node_version: "20", graphs: { chat: `./${path.relative(dir, path.join(peerDir, "chat.ts"))}:chat` }, env: {} }));
  const port = await freePort();
  let log = "";
  const child = spawn(process.execPath, [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port), "--config", config], {
    cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, LANGGRAPH_CLI_NO_ANALYTICS: "1", LANGSMITH_TRACING: "false", LANGSMITH_TRACING_V2: "false", LANGCHAIN_TRACING: "false", LANGCHAIN_TRACING_V2: "false", BROWSER: "none" },
  });
  child.stdout.on("data", (d) => { log += d; });
  child.stderr.on("data", (d) => { log += d; });
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000;
  for (;;) {
    const ok = await fetch(`${url}/ok`).then((r) => r.ok, () => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      try { process.kill(-child.pid, "SIGKILL"); } catch {}
      throw new Error(`LangGraph.js's dev server did not start: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return {
    url, log: () => log,
    stop: async () => { // the CLI's process group: the CLI, tsx and the server
      try { process.kill(-child.pid, "SIGTERM"); } catch { return; }
      const t = setTimeout(() => { try { process.kill(-child.pid, "SIGKILL"); } catch {} }, 10000);
      await exited;
      clearTimeout(t);
    },
  };
}

// ---- in the page: every SSE response it reads, as [{url, events: [{event, data}]}] ----
function recordStreams() {
  window.__streams = [];
  const orig = window.fetch;
  window.fetch = async (...args) => {
    const res = await orig(...args);
    if ((res.headers.get("content-type") || "").startsWith("text/event-stream")) {
      const rec = { url: String(args[0]?.url ?? args[0]), events: [] };
      window.__streams.push(rec);
      const reader = res.clone().body.getReader();
      const dec = new TextDecoder();
      let buf = "";
      (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          buf += dec.decode(value, { stream: true }).replace(/\r\n/g, "\n");
          let at;
          while ((at = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, at);
            buf = buf.slice(at + 2);
            let event = "message", data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("event:")) event = line.slice(6).trim();
              else if (line.startsWith("data:")) data += line.slice(5).trim();
            }
            if (data !== "") rec.events.push({ event, data: JSON.parse(data) });
          }
        }
        rec.closed = true;
      })();
    }
    return res;
  };
}

const api = async (url, p) => {
  const r = await fetch(`${url}${p}`);
  assert.equal(r.status, 200, `GET ${p}: ${r.status}`);
  return r.json();
};

// The same steps as test_web_usestream, against `url`; what was seen.
async function drive(browser, url) {
  const ctx = await browser.createBrowserContext();
  const page = await ctx.newPage();
  const errors = [];
  page.on("pageerror", (e) => errors.push(e.message));
  page.on("console", (m) => { if (m.type() === "error") errors.push(`console: ${m.text()}`); });
  await page.evaluateOnNewDocument(recordStreams);
  const messages = () => page.$$eval("[data-testid=message]", (els) => els.map((e) => ({
    type: e.dataset.type, id: e.dataset.id, content: e.querySelector("[data-testid=content]").textContent,
    calls: [...e.querySelectorAll("[data-testid=tool-call]")].map((c) => c.textContent),
  })));
  const waitFor = (fn, ...args) => page.waitForFunction(fn, { timeout: WAIT, polling: 50 }, ...args);
  const seen = {};
  await page.goto(`http://127.0.0.1:${site.address().port}/?api=${encodeURIComponent(url)}`, { waitUntil: "domcontentloaded" });
  await page.waitForSelector("[data-testid=send]:not([disabled])", { timeout: WAIT });
  await page.click("[data-testid=send]");
  await page.waitForSelector("[data-testid=approve]", { timeout: WAIT }).catch(async (e) => {
    throw new Error(`${url}: ${e.message}; the page shows ${JSON.stringify(await messages())}, errors ${JSON.stringify(errors)}`);
  });
  seen.sent = await messages();
  seen.sentTokens = await page.evaluate((id) => window.__seen[id], seen.sent.at(-1).id);
  seen.thread = await page.$eval("[data-testid=thread]", (e) => e.textContent);
  seen.interruptedThread = await api(url, `/threads/${seen.thread}`);
  seen.interruptedState = await api(url, `/threads/${seen.thread}/state`);
  await page.click("[data-testid=approve]");
  await waitFor(() => [...document.querySelectorAll("[data-testid=message]")].some((e) => e.textContent.includes("The answer is 42.")) &&
    document.querySelector("[data-testid=status]").textContent === "idle");
  seen.approved = await messages();
  seen.answerTokens = await page.evaluate((id) => window.__seen[id], seen.approved.at(-1).id);
  await waitFor(() => window.__streams.length === 2 && window.__streams.every((s) => s.closed));
  seen.streams = await page.evaluate(() => window.__streams);
  await page.reload({ waitUntil: "domcontentloaded" });
  await waitFor(() => document.querySelectorAll("[data-testid=message]").length === 4);
  seen.reloaded = await messages();
  seen.reloadedThread = await page.$eval("[data-testid=thread]", (e) => e.textContent);
  seen.finalThread = await api(url, `/threads/${seen.thread}`);
  seen.finalState = await api(url, `/threads/${seen.thread}/state`);
  seen.errors = errors;
  await ctx.close();
  return seen;
}

// ---- the facts compared: ids replaced by the order they first appear in ----
function facts(s) {
  const ids = new Map();
  const id = (v) => {
    if (typeof v !== "string") return v;
    if (!ids.has(v)) ids.set(v, `#${ids.size + 1}`);
    return ids.get(v);
  };
  const shown = (list) => list.map((m) => ({ type: m.type, id: id(m.id), content: m.content, calls: m.calls }));
  const lc = (m) => { // a message as LangChain's shape means it
    const o = { type: m.type, id: id(m.id), content: m.content };
    if (m.type === "ai") o.tool_calls = (m.tool_calls || []).map((c) => ({ name: c.name, args: c.args, id: c.id }));
    if (m.type === "tool") Object.assign(o, { tool_call_id: m.tool_call_id, name: m.name });
    return o;
  };
  const f = {};
  f["page.sent"] = shown(s.sent);
  // How a reply grew in the page: renders batch tokens as the browser's load allows, so
  // what is compared is that it grew (more than one render, each a prefix of the next) to
  // the same text; the tokens themselves are compared in stream.messages.text.
  const grew = (seen) => ({
    grew: seen.length > 1 && seen.every((t, i) => i === 0 || t.startsWith(seen[i - 1])),
    last: seen.at(-1),
  });
  f["page.sent.tokens"] = grew(s.sentTokens);
  f["page.approved"] = shown(s.approved);
  f["page.answer.tokens"] = grew(s.answerTokens);
  f["page.reloaded"] = shown(s.reloaded);
  f["page.reload.same-thread"] = s.reloadedThread === s.thread;
  f["page.errors"] = s.errors;
  f["interrupt.thread.status"] = s.interruptedThread.status;
  f["interrupt.state.next"] = s.interruptedState.next;
  f["interrupt.state.tasks"] = s.interruptedState.tasks.map((t) => ({ name: t.name, interrupts: t.interrupts, error: t.error }));
  f["interrupt.state.messages"] = s.interruptedState.values.messages.map(lc);
  s.streams.forEach((st, i) => {
    const run = i === 0 ? "send" : "approve";
    f[`stream.${run}.request`] = new URL(st.url).pathname.replace(s.thread, "{thread}");
    f[`stream.${run}.events`] = st.events.map((e) => e.event);
    const ends = st.events.filter((e) => e.event !== "messages");
    f[`stream.${run}.interrupt`] = ends.slice(-2).map((e) => e.data.__interrupt__ ?? null);
  });
  const all = s.streams.flatMap((st) => st.events);
  f["stream.metadata"] = all.filter((e) => e.event === "metadata").map((e) => ({ run_id: typeof e.data.run_id, attempt: e.data.attempt }));
  const tuples = all.filter((e) => e.event === "messages").map((e) => e.data);
  f["stream.messages.text"] = tuples.map(([m]) => [m.type === "AIMessageChunk" ? "ai" : m.type, id(m.id), m.content]);
  const tokens = tuples.filter(([m]) => m.type !== "tool");
  f["stream.messages.chunk"] = tokens.map(([m]) => ({ type: m.type, members: Object.keys(m).sort(), tool_call_chunks: m.tool_call_chunks }));
  f["stream.messages.metadata"] = tuples.map(([, meta]) => ["langgraph_node", "langgraph_step", "thread_id", "run_id"].map((k) => (k in meta ? k : null)));
  f["stream.updates"] = all.filter((e) => e.event === "updates").map((e) => Object.fromEntries(Object.entries(e.data).map(([k, v]) => [k, Array.isArray(v) ? v : (v.messages || []).map(lc)])));
  f["stream.values.messages"] = all.filter((e) => e.event === "values" && e.data.messages).map((e) => e.data.messages.map(lc));
  const values = all.filter((e) => e.event === "values").map((e) => Object.keys(e.data).sort());
  const twin = ["__interrupt__", "iteration", "messages"]; // the twin's channels (chat.ts)
  f["stream.values.keys"] = values.map((keys) => keys.filter((k) => twin.includes(k)));
  f["stream.values.more-keys"] = values.map((keys) => keys.filter((k) => !twin.includes(k)));
  f["state.next"] = s.finalState.next;
  f["state.thread.status"] = s.finalThread.status;
  f["state.messages"] = s.finalState.values.messages.map(lc);
  f["state.iteration"] = s.finalState.values.iteration;
  f["state.message.members"] = s.finalState.values.messages.map((m) => Object.keys(m).sort());
  return f;
}

const started = await Promise.allSettled([
  // One worker: both runs of the exchange meet the same copy of the scripted model.
  serve(opts.superstep, writeConfig(tmp, "usestream-peer", {}, ["chat"]), tmp, ["--workers", "1"]),
  startPeer(),
]);
if (started.some((r) => r.status === "rejected")) {
  await Promise.all(started.map((r) => (r.status === "fulfilled" ? r.value.stop(10000) : null)));
  await new Promise((r) => site.close(r));
  throw started.find((r) => r.status === "rejected").reason;
}
const [ours, peer] = started.map((r) => r.value);
const browser = await launchBrowser();
let failed = 0;
const ok = (name, fn) => {
  try {
    fn();
    console.log(`ok - ${name}`);
  } catch (e) {
    failed++;
    console.log(`not ok - ${name}\n${String(e.stack || e).split("\n").map((l) => "  # " + l).join("\n")}`);
  }
};
try {
  const t0 = Date.now();
  const a = await drive(browser, ours.url);
  const t1 = Date.now();
  const b = await drive(browser, peer.url);
  console.log(`# the steps took ${t1 - t0} ms on superstep serve, ${Date.now() - t1} ms on LangGraph.js's server`);
  console.log(`# renders of the replies: superstep ${a.sentTokens.length} + ${a.answerTokens.length}, LangGraph.js ${b.sentTokens.length} + ${b.answerTokens.length}`);
  ok("the page ends the same on both: four messages, the final answer, no error", () => {
    for (const s of [a, b]) {
      assert.deepEqual(s.reloaded.map((m) => m.type), ["human", "ai", "tool", "ai"]);
      assert.equal(s.reloaded[3].content, "The answer is 42.");
      assert.deepEqual(s.errors, []);
    }
  });
  const fa = facts(a), fb = facts(b);
  const differ = Object.keys({ ...fa, ...fb }).filter((k) => !(k in fa && k in fb) || !isDeepStrictEqual(fa[k], fb[k]));
  for (const k of Object.keys(fa)) {
    if (differ.includes(k)) continue;
    ok(`same: ${k}`, () => {});
  }
  for (const k of differ) {
    ok(`${k in KNOWN ? "documented difference" : "DIFFERENT"}: ${k}`, () => {
      console.log(`  # superstep:    ${JSON.stringify(fa[k])?.slice(0, 600)}\n  # LangGraph.js: ${JSON.stringify(fb[k])?.slice(0, 600)}`);
      assert.ok(k in KNOWN, `${k} differs and is not documented`);
      console.log(`  # why: ${KNOWN[k]}`);
    });
  }
  for (const k of Object.keys(KNOWN)) {
    if (!differ.includes(k)) ok(`documented difference still there: ${k}`, () => assert.fail(`${k} no longer differs: update KNOWN and docs/web.md`));
  }
} catch (e) {
  failed++;
  console.log(`not ok - the steps\n${String(e.stack || e).split("\n").map((l) => "  # " + l).join("\n")}`);
} finally {
  await browser.close().catch(() => {});
  const st = await ours.stop(10000);
  if (st.timedOut || st.code !== 0) {
    failed++;
    console.log(`not ok - superstep serve exit ${JSON.stringify(st)}\n${ours.stderr().slice(-1500)}`);
  }
  await peer.stop();
  await new Promise((r) => site.close(r));
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(failed ? `# ${failed} failed` : "# all passed");
process.exit(failed ? 1 : 0);

function isDeepStrictEqual(x, y) {
  try {
    assert.deepStrictEqual(x, y);
    return true;
  } catch {
    return false;
  }
}
