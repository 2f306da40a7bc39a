// Figures for the page of `superstep serve` (not a test): the bytes of the
// first load, the time the timeline of a thread with 10 000 checkpoints takes
// to show, the time the threads list takes to open with 100 000 threads.
//
//   node bench/web.mjs --superstep build/rel/superstep [--threads 100000] [--checkpoints 10000]
//                      [--runs 7] [--concurrency 32] [--db PATH] [--embedded]
//
// Needs tests/web's node_modules (npm ci --prefix tests/web) and Chromium
// (/usr/bin/chromium, or SST_CHROMIUM). --db PATH keeps the database: a second
// run on it reuses its threads instead of creating them again.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { startServer, parseArgs } from "../tests/server/_server.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..");
// --db PATH and --embedded are ours; parseArgs gets the rest.
const argv = process.argv.slice(2);
let dbArg = null;
const embedded = argv.includes("--embedded");
{
  const i = argv.indexOf("--db");
  if (i >= 0) { dbArg = path.resolve(argv[i + 1]); argv.splice(i, 2); }
  const j = argv.indexOf("--embedded");
  if (j >= 0) argv.splice(j, 1);
  process.argv.splice(2, process.argv.length, ...argv);
}
const opts = parseArgs("bench/web.mjs",
  "node bench/web.mjs --superstep BIN [--threads N] [--checkpoints N] [--runs N] [--concurrency N] [--db PATH] [--embedded] [--keep]",
  { threads: 100000, checkpoints: 10000, runs: 7, concurrency: 32 },
  { numbers: ["threads", "checkpoints", "runs", "concurrency"] });

const chromium = process.env.SST_CHROMIUM || "/usr/bin/chromium";
const pptrEntry = path.join(repo, "tests/web/node_modules/puppeteer-core/lib/esm/puppeteer/puppeteer-core.js");
if (!fs.existsSync(chromium)) { console.error(`bench/web.mjs: no Chromium at ${chromium} (set SST_CHROMIUM)`); process.exit(1); }
if (!fs.existsSync(pptrEntry)) { console.error("bench/web.mjs: run  npm ci --prefix tests/web  first"); process.exit(1); }
const { default: puppeteer } = await import(pathToFileURL(pptrEntry).href);

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-web-bench-"));
const db = dbArg || path.join(tmp, "bench.db");
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2; };
const fmt = (n) => (Number.isInteger(n) ? n.toLocaleString("en-US") : n.toFixed(1));
const log = (s) => console.log(`# ${s}`);

// --workers 2: the runs here are a single long one; --max-connections above --concurrency.
const server = await startServer({
  superstep: opts.superstep,
  config: path.join(repo, "tests/web/langgraph.json"),
  args: ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", "2", "--quiet", "--max-connections", String(Math.max(256, opts.concurrency * 2))],
  env: embedded ? {} : { SST_WEB_DIR: path.join(repo, "src/server/web") },
  timeoutMs: 60000,
});
const U = server.url;
async function api(method, p, body) {
  const res = await fetch(U + p, { method, headers: { "content-type": "application/json" }, body: body === undefined ? undefined : JSON.stringify(body) });
  const txt = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${txt}`);
  return txt ? JSON.parse(txt) : null;
}

const rows = [];
let browser;
try {
  log(`superstep ${opts.superstep}, database ${db}, page ${embedded ? "embedded" : "from src/server/web"}`);
  browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ["--no-sandbox", "--disable-dev-shm-usage"], protocolTimeout: 600000 });
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 800 });

  // 1. First load: the document, CSS and scripts (and, apart, the API calls it makes).
  {
    const sizes = new Map();
    const waits = [];
    let apiBytes = 0;
    page.on("response", (res) => {
      const u = new URL(res.url());
      const isStatic = u.pathname === "/" || u.pathname.startsWith("/ui/");
      waits.push(res.buffer().then((b) => { if (isStatic) sizes.set(u.pathname, b.length); else apiBytes += b.length; }, () => {}));
    });
    await page.goto(`${U}/`, { waitUntil: "networkidle0" });
    await Promise.all(waits);
    page.removeAllListeners("response");
    const total = [...sizes.values()].reduce((a, b) => a + b, 0);
    rows.push(["first load: document + CSS + JS (bytes, uncompressed)", total, null, null, "≤ 150,000", `${sizes.size} files`]);
    rows.push(["first load: its API responses (bytes)", apiBytes, null, null, "", "assistants, a page of threads, count"]);
  }

  // 2. A thread with N checkpoints: one run of `counter` (a node looping N times).
  let bigThread;
  {
    const found = await api("POST", "/threads/search", { metadata: { bench: "timeline", n: opts.checkpoints }, limit: 1 });
    if (found.length) {
      bigThread = found[0].thread_id;
      log(`reusing thread ${bigThread} (${opts.checkpoints} checkpoints)`);
    } else {
      const th = await api("POST", "/threads", { metadata: { bench: "timeline", n: opts.checkpoints } });
      const t0 = performance.now();
      await api("POST", `/threads/${th.thread_id}/runs/wait`, { assistant_id: "counter", input: { n: opts.checkpoints - 2 }, config: { recursion_limit: opts.checkpoints + 10 } });
      log(`thread ${th.thread_id}: ${opts.checkpoints} checkpoints by one run of counter (n=${opts.checkpoints - 2}) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      bigThread = th.thread_id;
    }
    const n = (await api("POST", `/threads/${bigThread}/history`, { limit: 1 }))[0].metadata.step + 2;
    log(`its history: ${n} checkpoints (steps -1..${n - 2})`);
  }

  // 3. The timeline: from the click on the thread in the list to its rows in the DOM.
  {
    const times = [], apiTimes = [];
    for (let i = 0; i < opts.runs; i++) {
      await page.goto(`${U}/#/threads?q=${bigThread}`, { waitUntil: "domcontentloaded" });
      await page.waitForSelector(`[data-thread-id="${bigThread}"]`);
      await page.waitForFunction(() => / of /.test(document.querySelector("[data-testid=threads-range]").textContent)); // the server idle again
      const r = await page.evaluate(async (id) => {
        const want = 50;
        const done = new Promise((resolve) => {
          const check = () => {
            if (document.querySelectorAll("[data-testid=timeline-row]").length >= want) { obs.disconnect(); resolve(performance.now()); }
          };
          const obs = new MutationObserver(check);
          obs.observe(document.getElementById("main"), { childList: true, subtree: true });
        });
        performance.clearResourceTimings();
        const t0 = performance.now();
        document.querySelector(`[data-thread-id="${id}"]`).click();
        const t1 = await done;
        const h = performance.getEntriesByType("resource").find((e) => e.name.endsWith("/history"));
        return { ms: t1 - t0, api: h ? h.responseEnd - h.startTime : null };
      }, bigThread);
      times.push(r.ms);
      if (r.api != null) apiTimes.push(r.api);
    }
    rows.push([`timeline of ${opts.checkpoints.toLocaleString("en-US")} checkpoints: click → first 50 rows in the DOM (ms)`, median(times), Math.min(...times), Math.max(...times), "≤ 300", `${opts.runs} runs`]);
    if (apiTimes.length) rows.push(["  of which POST /threads/{id}/history limit 50 (ms)", median(apiTimes), Math.min(...apiTimes), Math.max(...apiTimes), "", "server time + transfer"]);
    // Scrolling: the next page of 100.
    const more = [];
    for (let i = 0; i < Math.min(3, opts.runs); i++) {
      await page.goto(`${U}/#/threads/${bigThread}`, { waitUntil: "domcontentloaded" });
      await page.waitForFunction(() => document.querySelectorAll("[data-testid=timeline-row]").length >= 50);
      more.push(await page.evaluate(async () => {
        const t0 = performance.now();
        const n0 = document.querySelectorAll("[data-testid=timeline-row]").length;
        document.querySelector(".tl-scroll").scrollTop = 1e9;
        await new Promise((resolve) => { const c = () => (document.querySelectorAll("[data-testid=timeline-row]").length > n0 ? resolve() : requestAnimationFrame(c)); c(); });
        return performance.now() - t0;
      }));
    }
    rows.push(["timeline: scroll to the end → 100 more rows (ms)", median(more), Math.min(...more), Math.max(...more), "", `${more.length} runs`]);
  }

  // 4. N threads: POST /threads, `concurrency` requests in flight (the fastest honest way
  //    we found: threads are created only through the API, one transaction each).
  {
    const have = await api("POST", "/threads/count", {});
    const need = Math.max(0, opts.threads - have);
    if (need > 0) {
      let next = 0;
      const t0 = performance.now();
      const worker = async () => {
        while (next < need) {
          const i = next++;
          await api("POST", "/threads", { metadata: { bench: "list", i, owner: `user${i % 97}` } });
        }
      };
      await Promise.all(Array.from({ length: opts.concurrency }, worker));
      const s = (performance.now() - t0) / 1000;
      log(`created ${need.toLocaleString("en-US")} threads with POST /threads, ${opts.concurrency} in flight: ${s.toFixed(1)} s (${Math.round(need / s).toLocaleString("en-US")}/s)`);
    } else log(`reusing ${have.toLocaleString("en-US")} threads`);
    const total = await api("POST", "/threads/count", {});
    log(`threads in the database: ${total.toLocaleString("en-US")}`);

    // 5. Opening the list: from a thread's page to the list's first 50 rows, then to its total.
    const first = [], counted = [], last = [], searchApi = [], countApi = [];
    for (let i = 0; i < opts.runs; i++) {
      await page.goto(`${U}/#/threads/${bigThread}`, { waitUntil: "networkidle0" });
      await page.waitForSelector("[data-testid=graph] svg");
      const r = await page.evaluate(async () => {
        performance.clearResourceTimings();
        const t0 = performance.now();
        let tRows = null, tCount = null;
        await new Promise((resolve) => {
          const check = () => {
            if (tRows === null && document.querySelectorAll("[data-testid=thread-row]").length >= 50) tRows = performance.now();
            const r = document.querySelector("[data-testid=threads-range]");
            if (tCount === null && r && / of /.test(r.textContent)) tCount = performance.now();
            if (tRows !== null && tCount !== null) { obs.disconnect(); resolve(); }
          };
          const obs = new MutationObserver(check);
          obs.observe(document.getElementById("main"), { childList: true, subtree: true, characterData: true });
          location.hash = "#/threads";
        });
        const res = performance.getEntriesByType("resource");
        const d = (suffix) => { const e = res.find((x) => x.name.endsWith(suffix)); return e ? e.responseEnd - e.startTime : null; };
        return { rows: tRows - t0, count: tCount - t0, search: d("/threads/search"), cnt: d("/threads/count") };
      });
      first.push(r.rows);
      counted.push(r.count);
      if (r.search != null) searchApi.push(r.search);
      if (r.cnt != null) countApi.push(r.cnt);
    }
    const lastPage = Math.ceil(total / 50);
    for (let i = 0; i < Math.min(3, opts.runs); i++) {
      await page.goto(`${U}/#/threads/${bigThread}`, { waitUntil: "networkidle0" });
      await page.waitForSelector("[data-testid=graph] svg");
      last.push(await page.evaluate(async (p) => {
        const t0 = performance.now();
        await new Promise((resolve) => {
          const obs = new MutationObserver(() => {
            const r = document.querySelector("[data-testid=threads-range]");
            if (document.querySelector("[data-testid=thread-row]") && r && / of /.test(r.textContent)) { obs.disconnect(); resolve(); }
          });
          obs.observe(document.getElementById("main"), { childList: true, subtree: true, characterData: true });
          location.hash = `#/threads?page=${p}`;
        });
        return performance.now() - t0;
      }, lastPage));
    }
    const n = total.toLocaleString("en-US");
    rows.push([`threads list, ${n} threads: open → first 50 rows (ms)`, median(first), Math.min(...first), Math.max(...first), "", `${opts.runs} runs`]);
    rows.push([`threads list, ${n} threads: open → rows and "1–50 of ${n}" (ms)`, median(counted), Math.min(...counted), Math.max(...counted), "", ""]);
    if (searchApi.length) rows.push(["  POST /threads/search limit 50 (ms)", median(searchApi), Math.min(...searchApi), Math.max(...searchApi), "", ""]);
    if (countApi.length) rows.push(["  POST /threads/count (ms)", median(countApi), Math.min(...countApi), Math.max(...countApi), "", ""]);
    rows.push([`threads list: last page (${lastPage.toLocaleString("en-US")}, offset ${((lastPage - 1) * 50).toLocaleString("en-US")}) (ms)`, median(last), Math.min(...last), Math.max(...last), "", `${last.length} runs`]);
  }
} finally {
  if (browser) await browser.close();
  const st = await server.stop(30000);
  if (st.timedOut || st.code !== 0) console.error(`server exit ${JSON.stringify(st)}\n${server.stderr().slice(-2000)}`);
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true }); // --db PATH lives elsewhere
}

// The table.
const head = ["measure", "median", "min", "max", "goal", "note"];
const cells = rows.map(([m, med, min, max, goal, note]) => [m, fmt(med), min == null ? "" : fmt(min), max == null ? "" : fmt(max), goal, note]);
const w = head.map((h, i) => Math.max(h.length, ...cells.map((r) => String(r[i]).length)));
const line = (r) => "| " + r.map((c, i) => (i > 0 && i < 4 ? String(c).padStart(w[i]) : String(c).padEnd(w[i]))).join(" | ") + " |";
console.log(line(head));
console.log("|" + w.map((x, i) => (i > 0 && i < 4 ? "-".repeat(x + 1) + ":" : "-".repeat(x + 2))).join("|") + "|");
for (const r of cells) console.log(line(r));
