// GET /ok and GET /info (observed/00_meta.json).
import { test } from "node:test";
import assert from "node:assert/strict";
import { ON_PEER, raw } from "./_lib.mjs";

test("GET /ok answers 200 application/json {\"ok\":true}", async () => {
  const r = await raw("/ok");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  assert.deepEqual(r.json, { ok: true });
});

test("GET /info has a version and the capability flags", async () => {
  const r = await raw("/info");
  assert.equal(r.status, 200);
  assert.match(r.headers.get("content-type") ?? "", /^application\/json/);
  const info = r.json;
  assert.equal(typeof info.version, "string", "info.version is a string");
  assert.ok(info.version.length > 0, "info.version is not empty");
  assert.equal(typeof info.flags, "object");
  // LangGraph.js: {assistants: true, crons: false, langsmith: false, ...}; superstep has crons.
  assert.equal(info.flags.assistants, true, "flags.assistants");
  assert.equal(info.flags.crons, !ON_PEER, "flags.crons (superstep serves the cron routes)");
  assert.equal(info.flags.langsmith, false, "flags.langsmith (no LangSmith)");
});
