// test_server_auth_peer: the example auth of examples/auth on `superstep serve` and on
// LangGraph.js's own dev server (@langchain/langgraph-api 1.5.1 through
// @langchain/langgraph-cli 1.5.1, pinned in package.json / package-lock.json as in
// /work/shared/peers/langgraphjs-server), where the same users, tokens and rules are written
// with its Auth class (auth.ts) and the graph is notes.ts, the twin of examples/auth/notes.lua.
// The same SDK script (../auth_cases.mjs: two tenants and an admin, every endpoint family, bad
// tokens) runs against both; every case's status code and response shape are recorded and
// compared case by case. A case that differs must be in KNOWN, with its reason (documented in
// docs/auth.md, "Differences from LangGraph.js's server"); an unexpected difference fails, and
// so does a known one that went away (the docs would be wrong).
//
//   node tests/server/auth_peer/compare.mjs --superstep build/plain/superstep [--keep] [--out FILE]
//
// Both servers listen on 127.0.0.1, on ports of their own choosing. Skipped (exit 77, the
// reason printed) only when tests/server/auth_peer/node_modules is not installed (npm ci
// --prefix tests/server/auth_peer, which tools/test.sh runs); nothing is downloaded here.
import { spawn } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

const peerDir = path.dirname(fileURLToPath(import.meta.url));
const cli = path.join(peerDir, "node_modules/@langchain/langgraph-cli/dist/cli/cli.mjs");
if (!fs.existsSync(cli) || !fs.existsSync(path.join(peerDir, "node_modules/@langchain/langgraph-api"))) {
  console.log("skip: tests/server/auth_peer/node_modules has no @langchain/langgraph-cli / -api (npm ci --prefix tests/server/auth_peer)");
  process.exit(77);
}
const { startServer } = await import("../_server.mjs");
const { compareKey, runAuthCases } = await import("../auth_cases.mjs");

const argv = process.argv.slice(2);
const opts = { keep: false };
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--superstep") opts.superstep = path.resolve(argv[++i]);
  else if (argv[i] === "--keep") opts.keep = true;
  else if (argv[i] === "--out") opts.out = path.resolve(argv[++i]);
  else {
    console.error("usage: node tests/server/auth_peer/compare.mjs --superstep BIN [--keep] [--out FILE]");
    process.exit(2);
  }
}
if (!opts.superstep || !fs.existsSync(opts.superstep)) {
  console.error("compare.mjs: --superstep PATH (an existing binary) is required");
  process.exit(2);
}
const TIME_SCALE = Math.max(1, Number(process.env.SST_TEST_TIME_SCALE) || 1);
const EXAMPLE = path.join(peerDir, "..", "..", "..", "examples", "auth", "langgraph.json");

// ---- the differences found, each documented in docs/auth.md with its reason ----
// Every error differs in its body (not compared, but checked here): superstep sends JSON
// {"detail": message}, LangGraph.js its HTTPException's text/plain message (or none).
// Case name -> reason: the case's status or shape differs between the two servers.
const OPEN = "the open routes: LangGraph.js's auth middleware authenticates every route but /info (and GET /ui/*), so its /ok needs a user and /info does not; superstep leaves /ok, /openapi.json and the web page's files open and asks for a user on /info";
const RUN_OWNER = "a run's metadata: LangGraph.js's threads:create_run handler is the only place a run that makes its thread can stamp that thread's owner, so the handler stamps the run's metadata (and the checkpoints' metadata inherits it); superstep's built-in rules stamp the thread a run makes, not the run";
const ASSISTANT_READ = "assistants: superstep's rule is \"the user's own and the graphs' own (no owner)\"; a LangGraph filter is a conjunction of member matches and cannot say \"owner is me or absent\", so auth.ts lets everyone read and search every assistant (as examples/auth/custom does)";
const KNOWN = {
  "no token: GET /info": OPEN,
  "no token: GET /ok": OPEN,
  "threads.copy: bob copies alice's": "LangGraph.js answers a copy of a thread it does not find (or that the filter hides) with 409 \"Thread not found\" (its in-memory copy's quirk, as for an unknown thread); superstep 404, as for every other thread route",
  "threads.getState: alice's own": RUN_OWNER,
  "threads.getHistory: alice's own": RUN_OWNER,
  "threads.getState: alice's after the forged user": RUN_OWNER,
  "runs.create by alice (a forged langgraph_auth_user)": RUN_OWNER,
  "runs.get by alice": RUN_OWNER,
  "runs.list by alice": RUN_OWNER,
  "runs.joinStream: bob on alice's": "LangGraph.js opens the stream (200, text/event-stream) before it checks the thread and sends the 404 as an `error` event; superstep checks first and answers 404",
  "crons.createForThread by alice": "crons: LangGraph.js's in-memory server has none (/info says crons: false; every cron route answers 500 Not implemented, and createForThread's body fails its validation first: 400)",
  "crons.createForThread: bob on alice's thread": "crons: not in LangGraph.js's in-memory server (400 from its validation before the route's 500 Not implemented)",
  "crons.search by alice": "crons: not in LangGraph.js's in-memory server (500 Not implemented)",
  "crons.search by bob": "crons: not in LangGraph.js's in-memory server (500 Not implemented)",
  "crons.delete: bob deletes alice's": "crons: not in LangGraph.js's in-memory server (500 Not implemented)",
  "crons.delete: alice deletes hers": "crons: not in LangGraph.js's in-memory server (500 Not implemented)",
  "assistants.get: bob reads alice's": ASSISTANT_READ,
  "assistants.search by bob": ASSISTANT_READ,
  "runs.wait: bob runs alice's assistant": `${ASSISTANT_READ}; and LangGraph.js's create_run does not check the assistant against the user at all`,
  "assistants.update: bob updates the graph's own": "a shared assistant (the graph's own): superstep says 403 (it exists and everyone sees it, only an admin changes it); LangGraph.js's update matches the owner filter and answers 404 Assistant not found",
  "assistants.delete: alice deletes hers": "not auth: LangGraph.js answers an assistant's delete with 200 and the list of ids deleted, superstep (as LangGraph's Python server) with 204",
};

const freePort = () => new Promise((resolve, reject) => {
  const s = net.createServer();
  s.on("error", reject);
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => resolve(p)); });
});

async function startPeer(tmp, secret) {
  const dir = path.join(tmp, "peer");
  fs.mkdirSync(dir);
  // The config in the temporary directory, so that the server's .langgraph_api/ goes there.
  const rel = (f) => `./${path.relative(dir, path.join(peerDir, f))}`;
  const config = path.join(dir, "langgraph.json");
  fs.writeFileSync(config, JSON.stringify({
    node_version: "20", graphs: { notes: `${rel("notes.ts")}:notes` }, auth: { path: `${rel("auth.ts")}:auth` }, env: {},
  }));
  const port = await freePort();
  let log = "";
  const started = Date.now();
  const child = spawn(process.execPath, [cli, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", String(port), "--config", config], {
    cwd: dir, detached: true, stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...process.env, AUTH_JWT_SECRET: secret, LANGGRAPH_CLI_NO_ANALYTICS: "1", LANGSMITH_TRACING: "false",
      LANGSMITH_TRACING_V2: "false", LANGCHAIN_TRACING: "false", LANGCHAIN_TRACING_V2: "false", BROWSER: "none",
    },
  });
  child.stdout.on("data", (d) => { log += d; });
  child.stderr.on("data", (d) => { log += d; });
  const exited = new Promise((r) => child.on("exit", (code, signal) => r({ code, signal })));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000 * TIME_SCALE;
  for (;;) {
    // Any answer (its /ok asks for a user too: a 401) means it listens.
    const ok = await fetch(`${url}/ok`).then(() => true, () => false);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      try { process.kill(-child.pid, "SIGKILL"); } catch {}
      throw new Error(`LangGraph.js's dev server did not start: ${log.slice(-2000)}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  console.log(`compare.mjs: LangGraph.js's server at ${url}, up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
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

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-auth-peer-"));
const secret = crypto.randomBytes(48).toString("base64");
let sst, peer, failures = 0;
try {
  sst = await startServer({
    superstep: opts.superstep, config: EXAMPLE, env: { AUTH_JWT_SECRET: secret },
    args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(tmp, "sst.db"), "--workers", "2"],
    timeoutMs: 20000 * TIME_SCALE,
  });
  peer = await startPeer(tmp, secret);
  const ours = await runAuthCases(sst.url, secret);
  const theirs = await runAuthCases(peer.url, secret);
  if (opts.out) fs.writeFileSync(opts.out, JSON.stringify({ superstep: ours, langgraphjs: theirs }, null, 1) + "\n");
  if (ours.length !== theirs.length) {
    failures++;
    console.log(`not ok - both servers ran every case (superstep ${ours.length}, LangGraph.js ${theirs.length})`);
  }
  const byName = new Map(theirs.map((c) => [c.name, c]));
  let same = 0, known = 0, bodies = 0;
  for (const o of ours) {
    const t = byName.get(o.name);
    const a = compareKey(o.shape), b = t ? compareKey(t.shape) : "(not run)";
    if (o.status !== o.want) {
      failures++;
      console.log(`not ok - ${o.name}: superstep answered ${o.status}, the case wants ${o.want}: ${JSON.stringify(o.shape)}`);
    }
    if (o.shape.kind === "error" && o.shape.format !== "json") {
      failures++;
      console.log(`not ok - ${o.name}: superstep's error body is not JSON {"detail"}: ${JSON.stringify(o.shape)}`);
    }
    if (o.shape.kind === "error" && t?.shape.kind === "error") bodies++;
    const note = o.shape.message !== t?.shape.message && (o.shape.message || t?.shape.message)
      ? `\n    messages: superstep ${JSON.stringify(o.shape.message ?? null)}, LangGraph.js ${JSON.stringify(t?.shape.message ?? null)}` : "";
    if (a === b) {
      same++;
      if (KNOWN[o.name]) {
        failures++;
        console.log(`not ok - ${o.name}: a known difference went away (update KNOWN and docs/auth.md): ${a}`);
      } else console.log(`ok - ${o.name}: ${a}${note}`);
    } else if (KNOWN[o.name]) {
      known++;
      console.log(`ok - ${o.name}: differs as documented (${KNOWN[o.name]})\n    superstep:    ${a}\n    LangGraph.js: ${b}${note}`);
    } else {
      failures++;
      console.log(`not ok - ${o.name}: differs\n    superstep:    ${a}\n    LangGraph.js: ${b}${note}`);
    }
  }
  for (const name of Object.keys(KNOWN)) {
    if (!ours.some((o) => o.name === name)) {
      failures++;
      console.log(`not ok - KNOWN names a case that did not run: ${name}`);
    }
  }
  console.log(`compare.mjs: ${ours.length} cases: ${same} identical in status and shape, ${known} documented differences; ` +
    `${bodies} errors on both, their bodies JSON {"detail"} from superstep and text from LangGraph.js (messages shown, not compared)`);
} catch (e) {
  failures++;
  console.log(`not ok - ${e.stack ?? e}`);
  if (peer) console.log(peer.log().slice(-3000));
} finally {
  if (peer) await peer.stop();
  if (sst) await sst.stop(10000 * TIME_SCALE);
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else console.log(`compare.mjs: kept ${tmp}`);
}
console.log(failures === 0 ? "compare.mjs: all passed" : `compare.mjs: ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
