// The page of `superstep serve` in headless Chromium (puppeteer-core, pinned in
// package.json): starts one server on this directory's langgraph.json and one
// browser, runs every test of the *.test.mjs files, each in a fresh browser
// context, saves a screenshot per test, exits non-zero on any failure.
//
//   node tests/web/run.mjs --superstep build/dev/superstep [--shots DIR] [--only a,b] [--keep] [--embedded]
//                          [--config FILE]   (langgraph.python.json: Python twins of the graphs)
//
// See README.md.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer } from "../server/_server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "../..");

function usage(msg) {
  if (msg) console.error(`run.mjs: ${msg}`);
  console.error("usage: node tests/web/run.mjs --superstep BIN [--shots DIR] [--only NAME,...] [--keep] [--embedded] [--config FILE]");
  process.exit(2);
}

const opts = { shots: null, only: null, keep: false, embedded: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  const [name, inline] = argv[i].split(/=(.*)/s);
  const val = () => (inline !== undefined ? inline : i + 1 < argv.length ? argv[++i] : usage(`${name} needs a value`));
  if (name === "--superstep") opts.superstep = path.resolve(val());
  else if (name === "--shots") opts.shots = path.resolve(val());
  else if (name === "--only") opts.only = val().split(",").map((s) => s.trim()).filter(Boolean);
  else if (name === "--keep") opts.keep = true;
  else if (name === "--embedded") opts.embedded = true;
  else if (name === "--config") opts.config = path.resolve(val());
  else if (name === "-h" || name === "--help") usage();
  else usage(`unknown argument ${argv[i]}`);
}
if (!opts.superstep) usage("give --superstep PATH");
if (!fs.existsSync(opts.superstep)) usage(`--superstep ${opts.superstep} does not exist`);

// Fail (never skip) without the browser or the pinned puppeteer-core.
const chromium = process.env.SST_CHROMIUM || "/usr/bin/chromium";
if (!fs.existsSync(chromium)) {
  console.error(`run.mjs: no Chromium at ${chromium} (install Debian's chromium, or set SST_CHROMIUM to a Chrome/Chromium binary)`);
  process.exit(1);
}
const pptrEntry = path.join(here, "node_modules/puppeteer-core/lib/esm/puppeteer/puppeteer-core.js");
if (!fs.existsSync(pptrEntry)) {
  console.error(`run.mjs: ${path.join(here, "node_modules")} has no puppeteer-core: run  npm ci --prefix tests/web  (it downloads no browser)`);
  process.exit(1);
}
const { default: puppeteer } = await import(pathToFileURL(pptrEntry).href);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-web-"));
const shots = opts.shots || fs.mkdtempSync(path.join(os.tmpdir(), "sst-web-shots-"));
fs.mkdirSync(shots, { recursive: true });
const webDir = path.join(repo, "src/server/web");
const serverEnv = opts.embedded ? {} : { SST_WEB_DIR: webDir };
// Sanitizer builds: Graphviz's dot layout loses memory on clusters (tests/lsan.supp, as CTest).
if (!process.env.LSAN_OPTIONS) serverEnv.LSAN_OPTIONS = `suppressions=${path.join(repo, "tests/lsan.supp")}:print_suppressions=0`;

// The tests.
const files = fs.readdirSync(here).filter((f) => f.endsWith(".test.mjs")).sort();
const tests = [];
for (const f of files) {
  const base = f.replace(/\.test\.mjs$/, "");
  if (opts.only && !opts.only.includes(base)) continue;
  const mod = await import(pathToFileURL(path.join(here, f)).href);
  for (const t of mod.tests) tests.push({ ...t, file: base });
}
if (!tests.length) usage(`no test matches --only ${opts.only}`);

const started = Date.now();
let server, browser;
let failed = 0, passed = 0;
const cleanup = async () => {
  if (browser) await browser.close().catch(() => {});
  let stopped = null;
  if (server) stopped = await server.stop(10000);
  return stopped;
};
try {
  server = await startServer({
    superstep: opts.superstep,
    config: opts.config ?? path.join(here, "langgraph.json"),
    args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(tmp, "web.db"), "--workers", "2", "--quiet"],
    env: serverEnv,
    timeoutMs: 30000,
  });
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: ["--no-sandbox", "--disable-dev-shm-usage", "--font-render-hinting=none"],
    protocolTimeout: 120000,
  });
  console.log(`# server ${server.url} (${opts.embedded ? "embedded page" : "SST_WEB_DIR=" + webDir}), browser ${await browser.version()}`);
  console.log(`# screenshots in ${shots}`);

  const lib = await import(pathToFileURL(path.join(here, "_lib.mjs")).href);
  for (const t of tests) {
    const ctx = await browser.createBrowserContext();
    const page = await ctx.newPage();
    const errors = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => { if (m.type() === "error" && !/status of 40[14]/.test(m.text())) errors.push(`console: ${m.text()}`); });
    await page.setViewport({ width: 1280, height: 800 });
    const t0 = Date.now();
    const env = lib.context({ page, ctx, browser, url: server.url, superstep: opts.superstep, shots, tmp, here, serverEnv, name: t.shot || t.file });
    let err = null;
    try {
      await Promise.race([
        t.run(env),
        new Promise((_, rej) => setTimeout(() => rej(new Error(`timed out after ${t.timeout || 120} s`)), (t.timeout || 120) * 1000)),
      ]);
      if (errors.length && !t.allowPageErrors) throw new Error(`errors in the page:\n  ${errors.join("\n  ")}`);
    } catch (e) {
      err = e;
    }
    if (!env.shotTaken || err) await env.shot(err ? `${t.shot || t.file}-failed` : t.shot || t.file).catch(() => {});
    await env.cleanup();
    await ctx.close().catch(() => {});
    const ms = Date.now() - t0;
    if (err) {
      failed++;
      console.log(`not ok - ${t.file}: ${t.name} (${ms} ms)`);
      console.log(String(err.stack || err).split("\n").map((l) => "  # " + l).join("\n"));
    } else {
      passed++;
      console.log(`ok - ${t.file}: ${t.name} (${ms} ms)`);
    }
  }
} catch (e) {
  failed++;
  console.log(`not ok - setup: ${e.stack || e}`);
}
const stopped = await cleanup();
if (stopped && (stopped.timedOut || stopped.code !== 0)) {
  failed++;
  console.log(`not ok - server exit: ${JSON.stringify(stopped)} (SIGTERM must exit 0 within 10 s)\n  # stderr: ${server.stderr().slice(-2000)}`);
}
if (failed && server) console.log(`# server stderr (tail):\n${server.stderr().slice(-3000).split("\n").map((l) => "#   " + l).join("\n")}`);
console.log(`# ${passed}/${tests.length} passed in ${((Date.now() - started) / 1000).toFixed(1)} s; screenshots in ${shots}`);
if (opts.keep) console.log(`# kept ${tmp}`);
else fs.rmSync(tmp, { recursive: true, force: true });
process.exit(failed ? 1 : 0);
