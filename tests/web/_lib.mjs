// What every web test gets (run.mjs builds one per test): the page, the API
// from Node, waits, screenshots, extra servers.
import assert from "node:assert/strict";
import path from "node:path";
import { startServer } from "../server/_server.mjs";

export const WAIT = Number(process.env.SST_WEB_WAIT_MS) || 20000; // generous: sanitizer builds are slow

export function context({ page, ctx, browser, url, superstep, shots, tmp, here, serverEnv, name }) {
  const extra = [];
  const t = {
    page, ctx, browser, url, superstep, tmp, here, shotTaken: false,

    // The API from Node (plain fetch); token: a bearer token.
    async api(method, p, body, { token, base = url } = {}) {
      const headers = { "content-type": "application/json" };
      if (token) headers.authorization = `Bearer ${token}`;
      const res = await fetch(base + p, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
      const txt = await res.text();
      if (!res.ok) throw new Error(`${method} ${p}: HTTP ${res.status} ${txt}`);
      return txt ? JSON.parse(txt) : null;
    },
    // A thread of graph with metadata, run to its end (or interrupt) with input.
    async thread(graph, input, metadata = {}) {
      const th = await t.api("POST", "/threads", { metadata: { graph_id: graph, ...metadata } });
      if (input !== undefined) await t.api("POST", `/threads/${th.thread_id}/runs/wait`, { assistant_id: graph, input });
      return th.thread_id;
    },
    async history(id, limit = 100) { return t.api("POST", `/threads/${id}/history`, { limit }); },
    async state(id) { return t.api("GET", `/threads/${id}/state`); },

    async goto(hash = "", base = url) {
      await page.goto(`${base}/${hash}`, { waitUntil: "domcontentloaded" });
    },
    async openThread(id, cp) {
      await t.goto(`#/threads/${id}${cp ? "/" + cp : ""}`);
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length > 0 && !document.querySelector("[data-testid=checkpoint-detail] .muted:only-child"));
    },
    // Waits until fn(...args) is truthy in the page; returns its value.
    async waitFor(fn, ...args) {
      const h = await page.waitForFunction(fn, { timeout: WAIT, polling: 50 }, ...args);
      return h.jsonValue();
    },
    // Waits until the text of selector (first match) matches re (a RegExp or a substring).
    async waitText(selector, re, timeout = WAIT) {
      const src = re instanceof RegExp ? re.source : null;
      const flags = re instanceof RegExp ? re.flags : "";
      try {
        await page.waitForFunction((sel, src, flags, sub) => {
          const el = document.querySelector(sel);
          if (!el) return false;
          const txt = el.textContent;
          return src !== null ? new RegExp(src, flags).test(txt) : txt.includes(sub);
        }, { timeout, polling: 50 }, selector, src, flags, re instanceof RegExp ? null : String(re));
      } catch (e) {
        const got = await page.$eval(selector, (el) => el.textContent).catch(() => "(no such element)");
        throw new Error(`waiting for ${selector} to show ${re}: got ${JSON.stringify(got.slice(0, 400))}`);
      }
    },
    async text(selector) { return page.$eval(selector, (el) => el.textContent); },
    async texts(selector) { return page.$$eval(selector, (els) => els.map((e) => e.textContent)); },
    async rows() {
      return page.$$eval("[data-testid=timeline-row]", (els) => els.map((e) => ({
        id: e.dataset.checkpointId, step: Number(e.dataset.step), source: e.dataset.source, lane: Number(e.dataset.lane),
        current: e.getAttribute("aria-current") === "true", text: e.textContent,
      })));
    },
    // Clicks selector once it is visible. A live page may redraw it between the lookup
    // and the click ("Node is detached", or "not clickable" while it is laid out anew):
    // then it is looked up again, as a user would.
    async click(selector) {
      for (let tries = 0; ; tries++) {
        await page.waitForSelector(selector, { visible: true, timeout: WAIT });
        try {
          await page.click(selector);
          return;
        } catch (e) {
          if (tries >= 20 || !/detached|not clickable/i.test(String(e && e.message))) throw e;
        }
      }
    },
    // Replaces the text of a textarea/input as a user would.
    async type(selector, text) {
      await page.waitForSelector(selector, { visible: true, timeout: WAIT });
      await page.$eval(selector, (el) => { el.focus(); el.select(); });
      await page.keyboard.press("Backspace");
      await page.type(selector, text);
    },
    async shot(file = name, { fullPage = false } = {}) {
      const p = path.join(shots, `${file}.png`);
      await page.screenshot({ path: p, fullPage });
      t.shotTaken = true;
      return p;
    },
    // Whether anything makes the page wider than its viewport.
    async overflow() {
      return page.evaluate(() => {
        const w = document.documentElement.clientWidth;
        const out = [];
        if (document.documentElement.scrollWidth > w) out.push(`document ${document.documentElement.scrollWidth} > ${w}`);
        for (const el of document.querySelectorAll("body *")) {
          const r = el.getBoundingClientRect();
          if (r.width && r.right > w + 0.5) {
            let clipped = false;
            for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
              const ov = getComputedStyle(p).overflowX;
              if (ov !== "visible") { const pr = p.getBoundingClientRect(); if (pr.right <= w + 0.5) { clipped = true; break; } }
            }
            if (!clipped) out.push(`${el.tagName.toLowerCase()}${el.className && typeof el.className === "string" ? "." + el.className.split(" ").join(".") : ""} right=${Math.round(r.right)}`);
          }
        }
        return out.slice(0, 10);
      });
    },
    async startServer(opts) {
      const s = await startServer({ superstep, config: path.join(here, "langgraph.json"), env: serverEnv, timeoutMs: 30000, ...opts, env: { ...serverEnv, ...(opts.env || {}) } });
      extra.push(s);
      return s;
    },
    async cleanup() {
      for (const s of extra) await s.stop(10000);
    },
    assert,
  };
  return t;
}

export { assert };
