#!/usr/bin/env node
// CTest driver of the `superstep serve` suite (tests/server/README.md).
//
//   node run.mjs --superstep /path/to/superstep [--pg] [--only name,...] [--jobs N] [--config FILE]
//   node run.mjs --url http://127.0.0.1:PORT [--peer langgraphjs|none] [--only ...]
//
// Without --url it starts a fresh server on this directory's langgraph.json (or --config's:
// langgraph.python.json holds the Python twins of the graphs)
// (--port 0, its own temporary --db, --workers 2), waits for the line
// "listening on http://127.0.0.1:PORT", runs every *.test.mjs with node's test
// runner (env SST_URL, SST_SUPERSTEP, SST_PEER), then stops the server with
// SIGTERM and checks that it exits with code 0 within 10 s. With --pg the
// server's --db is a fresh schema on the test PostgreSQL server (the CTest
// fixture "pg": SST_PGTEST_URL, or the file SST_PGTEST_URL_FILE names). With --url it runs
// against a server that is already running (e.g. LangGraph.js's own, detected
// through GET /info; the tests of deliberate differences are then skipped).
import { execFileSync, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "./_server.mjs";

// A test file's deadline only turns a hang into a failure: SST_TEST_TIME_SCALE (set by
// CTest: x3 under ASan, x5 under TSan) stretches it, as a sanitizer build on a busy
// machine takes minutes where a quiet plain one takes seconds.
const TIME_SCALE = Math.max(1, Number(process.env.SST_TEST_TIME_SCALE) || 1);

const HERE = path.dirname(fileURLToPath(import.meta.url));

function usage(msg) {
  if (msg) console.error(`run.mjs: ${msg}`);
  console.error("usage: node run.mjs --superstep PATH [--only a,b] [--jobs N] [--keep] [--config FILE]\n" +
    "       node run.mjs --url http://HOST:PORT [--peer langgraphjs|none] [--superstep PATH] [--only a,b]");
  process.exit(2);
}

const opts = { only: null, jobs: 1, keep: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const a = argv[i];
  const val = () => {
    if (a.includes("=")) return a.slice(a.indexOf("=") + 1);
    if (i + 1 >= argv.length) usage(`${a} needs a value`);
    return argv[++i];
  };
  const name = a.split("=")[0];
  if (name === "--superstep") opts.superstep = path.resolve(val());
  else if (name === "--url") opts.url = val().replace(/\/$/, "");
  else if (name === "--only") opts.only = val().split(",").map((s) => s.trim()).filter(Boolean);
  else if (name === "--peer") opts.peer = val();
  else if (name === "--jobs") opts.jobs = Number(val());
  else if (name === "--keep") opts.keep = true;
  else if (name === "--pg") opts.pg = true;
  else if (name === "--config") opts.config = path.resolve(val());
  else if (name === "-h" || name === "--help") usage();
  else usage(`unknown argument ${a}`);
}
if (!opts.url && !opts.superstep) usage("give --superstep PATH (or --url of a running server)");
if (!Number.isInteger(opts.jobs) || opts.jobs < 1) usage("--jobs wants a positive integer");

// The SDK must be installed: never skip silently.
const sdkDir = path.join(HERE, "node_modules", "@langchain", "langgraph-sdk");
if (!fs.existsSync(sdkDir)) {
  console.error(`run.mjs: ${sdkDir} is missing.\n` +
    "  Install the pinned LangGraph JS SDK first:  npm ci --prefix tests/server");
  process.exit(1);
}
if (opts.superstep && !fs.existsSync(opts.superstep)) {
  console.error(`run.mjs: --superstep ${opts.superstep} does not exist`);
  process.exit(1);
}

// The test files.
let files = fs.readdirSync(HERE).filter((f) => f.endsWith(".test.mjs")).sort();
if (opts.only) {
  const want = new Set(opts.only.map((n) => n.replace(/\.test\.mjs$/, "")));
  const unknown = [...want].filter((n) => !files.includes(`${n}.test.mjs`));
  if (unknown.length) usage(`--only: no such test file: ${unknown.join(", ")} (have: ${files.map((f) => f.replace(".test.mjs", "")).join(", ")})`);
  files = files.filter((f) => want.has(f.replace(/\.test\.mjs$/, "")));
}

let server = null;
let tmp = null;
let failed = false;

async function cleanup() {
  if (server) {
    const s = server;
    server = null;
    const res = await s.stop(10000);
    if (res.timedOut) {
      console.error("run.mjs: FAIL: superstep serve did not exit within 10 s of SIGTERM (killed)");
      failed = true;
    } else if (res.code !== 0) {
      console.error(`run.mjs: FAIL: superstep serve exited with code ${res.code} (signal ${res.signal}) after SIGTERM; want 0`);
      failed = true;
    } else {
      console.log("run.mjs: server stopped cleanly (SIGTERM, exit 0)");
    }
    if (failed && s.stderr().trim()) console.error(`--- server stderr (tail) ---\n${s.stderr().slice(-4000)}`);
  }
  if (tmp && !opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  else if (tmp) console.log(`run.mjs: kept ${tmp}`);
}

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.on(sig, async () => {
    console.error(`run.mjs: ${sig}, stopping`);
    failed = true;
    await cleanup();
    process.exit(130);
  });
}

// A fresh schema on the test PostgreSQL server, as a --db URL; null (skipped, or failed when
// SST_REQUIRE_POSTGRES=1) when there is no server.
function pgSchema() {
  let base = process.env.SST_PGTEST_URL || "";
  const file = process.env.SST_PGTEST_URL_FILE;
  if (!base && file && fs.existsSync(file)) base = fs.readFileSync(file, "utf8").trim();
  if (!base) {
    if (process.env.SST_REQUIRE_POSTGRES === "1") {
      console.error("run.mjs: FAIL: --pg without a test PostgreSQL server and SST_REQUIRE_POSTGRES=1");
      failed = true;
    } else {
      console.log("run.mjs: --pg: no test PostgreSQL server: skipped");
    }
    return null;
  }
  const schema = `t_sdk_${process.pid}`;
  execFileSync("psql", ["-q", base, "-c",
    `SET client_min_messages=warning; DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`]);
  return `${base}${base.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`;
}

async function main() {
  let url = opts.url;
  let peer = opts.peer === "none" ? "" : opts.peer ?? "";
  if (!url) {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-server-test-"));
    const db = opts.pg ? pgSchema() : path.join(tmp, "server.db");
    if (db === null) return;
    server = await startServer({
      superstep: opts.superstep,
      config: opts.config ?? path.join(HERE, "langgraph.json"),
      args: ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", "2"],
      timeoutMs: 20000 * TIME_SCALE,
    });
    url = server.url;
    console.log(`run.mjs: superstep serve listening on ${url} (db ${db})`);
  } else if (opts.peer === undefined) {
    // Against a running server: is it LangGraph.js's own?
    try {
      const info = await (await fetch(`${url}/info`)).json();
      if (info?.langgraph_js_version || info?.context === "js") peer = "langgraphjs";
    } catch (e) {
      console.error(`run.mjs: GET ${url}/info failed: ${e.message}`);
      failed = true;
      return;
    }
  }
  if (peer) console.log(`run.mjs: running against ${peer} (SST_PEER=${peer}): tests of deliberate differences are skipped`);

  const env = { ...process.env, SST_URL: url, SST_PEER: peer };
  if (opts.superstep) env.SST_SUPERSTEP = opts.superstep;
  else delete env.SST_SUPERSTEP;

  const args = ["--test", `--test-concurrency=${opts.jobs}`, `--test-timeout=${60000 * TIME_SCALE}`, "--test-reporter=spec",
    ...files.map((f) => path.join(HERE, f))];
  const code = await new Promise((resolve) => {
    const child = spawn(process.execPath, args, { cwd: HERE, env, stdio: "inherit" });
    child.on("exit", (c, s) => resolve(c ?? (s ? 1 : 0)));
  });
  if (code !== 0) {
    console.error(`run.mjs: FAIL: the test runner exited with ${code}`);
    failed = true;
  }
  if (server && (server.proc.exitCode !== null || server.proc.signalCode !== null)) {
    console.error(`run.mjs: FAIL: superstep serve died during the tests (code ${server.proc.exitCode}, signal ${server.proc.signalCode})\n${server.stderr().slice(-4000)}`);
    failed = true;
    server = null;
  }
}

try {
  await main();
} catch (e) {
  console.error(`run.mjs: FAIL: ${e.message}`);
  failed = true;
}
await cleanup();
process.exit(failed ? 1 : 0);
