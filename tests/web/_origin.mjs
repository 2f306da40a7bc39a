// For the tests of browsers on other origins (cors.mjs, and later ones): a second origin
// that serves one page, headless Chromium with a made-up host name mapped to 127.0.0.1
// (so that a page can have an origin that is not loopback), and servers on configs of
// their own.
import fs from "node:fs";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer, runServerExpectingExit } from "../server/_server.mjs";

export const here = path.dirname(fileURLToPath(import.meta.url));
export const repo = path.resolve(here, "../..");
export const FOREIGN_HOST = "elsewhere.test"; // resolved to 127.0.0.1 by Chromium only

// A static server on 127.0.0.1:0 answering every GET with `html` (a function of the
// request's URL, or a string); {port, close()}.
export async function pageServer(html) {
  const srv = http.createServer((req, res) => {
    const body = typeof html === "function" ? html(new URL(req.url, "http://x")) : html;
    res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
    res.end(body);
  });
  await new Promise((r) => srv.listen(0, "127.0.0.1", r));
  return { port: srv.address().port, close: () => new Promise((r) => srv.close(r)) };
}

// Chromium (puppeteer-core from tests/web/node_modules), failing (never skipping) when
// either is missing.
export async function launchBrowser() {
  const chromium = process.env.SST_CHROMIUM || "/usr/bin/chromium";
  if (!fs.existsSync(chromium)) throw new Error(`no Chromium at ${chromium} (set SST_CHROMIUM)`);
  const entry = path.join(here, "node_modules/puppeteer-core/lib/esm/puppeteer/puppeteer-core.js");
  if (!fs.existsSync(entry)) throw new Error("tests/web/node_modules has no puppeteer-core: npm ci --prefix tests/web");
  const { default: puppeteer } = await import(pathToFileURL(entry).href);
  return puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", `--host-resolver-rules=MAP ${FOREIGN_HOST} 127.0.0.1`],
    protocolTimeout: 120000,
  });
}

// A temporary directory with a langgraph.json of `cfg` whose graphs are tests/server's
// (`graphs` names them); returns its path.
export function writeConfig(tmp, name, cfg, graphs = ["counter", "chat"]) {
  const g = {};
  for (const id of graphs) g[id] = path.join(repo, "tests/server/graphs", `${id}.lua`);
  const file = path.join(tmp, `${name}.json`);
  fs.writeFileSync(file, JSON.stringify({ graphs: g, ...cfg }, null, 1));
  return file;
}

export function tmpDir() {
  return fs.mkdtempSync(path.join(os.tmpdir(), "sst-origin-"));
}

export function serve(superstep, config, tmp, extraArgs = [], extraEnv = {}) {
  const env = process.env.LSAN_OPTIONS ? { ...extraEnv } : { LSAN_OPTIONS: `suppressions=${path.join(repo, "tests/lsan.supp")}:print_suppressions=0`, ...extraEnv };
  return startServer({
    superstep, config, env, timeoutMs: 30000,
    args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--workers", "2", "--quiet", "--no-web", ...extraArgs],
  });
}

export function serveExpectingExit(superstep, config) {
  return runServerExpectingExit({ superstep, config, args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--quiet"] });
}

// Runs the named async tests in order, printing TAP-like lines; exits non-zero on a failure,
// or when cleanup() (which stops the servers) returns true (a server that did not exit 0).
export async function runTests(tests, cleanup) {
  let failed = 0;
  for (const [name, fn] of tests) {
    const t0 = Date.now();
    try {
      await fn();
      console.log(`ok - ${name} (${Date.now() - t0} ms)`);
    } catch (e) {
      failed++;
      console.log(`not ok - ${name}\n${String(e.stack || e).split("\n").map((l) => "  # " + l).join("\n")}`);
    }
  }
  if (await cleanup()) failed++;
  console.log(`# ${tests.length - failed}/${tests.length} passed`);
  process.exit(failed ? 1 : 0);
}
