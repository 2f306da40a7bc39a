#!/usr/bin/env node
// Users and ownership in `superstep serve` (docs/auth.md), through LangGraph's JS SDK:
// the worked example (examples/auth: JWT HS256, admin permission "admin") served, and
// three users — two tenants and an admin — each with a Client of their own.
//
//   node users.mjs --superstep PATH [--pg] [--lua] [--ops 500] [--keep]
//
// For every endpoint family (threads, state and history, runs with join, streams and
// Last-Event-ID, crons, assistants, the store) a tenant creates, reads, updates, searches,
// counts and deletes their own, the other tenant gets 404 or an empty page, the admin sees
// all; the graph sees its user (config.configurable.langgraph_auth_user); bad tokens of
// every kind get 401 with a message. Then a random audit: --ops operations by the three
// users in random order, and no response a tenant got may hold the other tenant's
// identity or the id of anything the other tenant made. --pg: the database is a fresh
// schema on the test PostgreSQL server (skipped without one, as run.mjs does). --lua: the
// custom model instead (examples/auth/custom: a Lua auth file with authenticate and `on`
// handlers, the same rules; tokens from a users file written here), where the assistants
// differ on purpose: its handler lets everyone read every assistant.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Client } from "@langchain/langgraph-sdk";
import { runServerExpectingExit, startServer } from "./_server.mjs";
import { runAuthCases } from "./auth_cases.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const EXAMPLE = path.join(HERE, "..", "..", "examples", "auth", "langgraph.json");
const CUSTOM = path.join(HERE, "..", "..", "examples", "auth", "custom", "langgraph.json");
const TIME_SCALE = Math.max(1, Number(process.env.SST_TEST_TIME_SCALE) || 1);
const opts = { ops: 500, pg: false, keep: false };
const argv = process.argv.slice(2);
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === "--superstep") opts.superstep = path.resolve(argv[++i]);
  else if (argv[i] === "--pg") opts.pg = true;
  else if (argv[i] === "--lua") opts.lua = true;
  else if (argv[i] === "--ops") opts.ops = Number(argv[++i]);
  else if (argv[i] === "--keep") opts.keep = true;
  else {
    console.error("usage: node users.mjs --superstep PATH [--pg] [--lua] [--ops N] [--keep]");
    process.exit(2);
  }
}
if (!opts.superstep || !fs.existsSync(opts.superstep)) {
  console.error("users.mjs: --superstep PATH (an existing binary) is required");
  process.exit(2);
}

const SECRET = crypto.randomBytes(48).toString("base64");
const ISS = "https://auth.example.com";
const b64 = (o) => Buffer.from(typeof o === "string" ? o : JSON.stringify(o)).toString("base64url");
function jwt(claims, { alg = "HS256", secret = SECRET, header = {} } = {}) {
  const h = b64({ alg, typ: "JWT", ...header });
  const p = b64({ iss: ISS, aud: "superstep", exp: Math.floor(Date.now() / 1000) + 3600, ...claims });
  const sig = alg === "none" ? "" : crypto.createHmac("sha256", secret).update(`${h}.${p}`).digest("base64url");
  return `${h}.${p}.${sig}`;
}

// Identities unlike anything else in a response, so the audit's substring test is exact.
const ALICE = "tenant-alice-7c1f", BOB = "tenant-bob-92e4", ROOT = "ops-root-d05a";
let url;
// The custom model's tokens (a users file written at start, read by examples/auth/custom).
const luaToken = (sub) => `tok-${sub}-${SECRET.slice(0, 8)}`;
const bearer = (sub, permissions = []) => `Bearer ${opts.lua ? luaToken(sub) : jwt({ sub, permissions })}`;
const clientOf = (sub, permissions = []) =>
  new Client({ apiUrl: url, defaultHeaders: { authorization: bearer(sub, permissions) } });

async function status(promise) {
  try {
    await promise;
    return 200;
  } catch (e) {
    return e.status ?? e.response?.status ?? `error: ${e.message}`;
  }
}
async function collect(gen) {
  const out = [];
  for await (const c of gen) out.push(c);
  return out;
}
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// uuid5(name, namespace): the ids a cron's fire derives (tests/server/_lib.mjs).
function uuid5(name, namespace) {
  const h = crypto.createHash("sha1").update(Buffer.from(namespace.replace(/-/g, ""), "hex")).update(name).digest();
  h[6] = (h[6] & 0x0f) | 0x50;
  h[8] = (h[8] & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString("hex");
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20)}`;
}
async function waitFor(what, fn, ms = 15000 * TIME_SCALE) {
  const end = Date.now() + ms;
  for (;;) {
    if (await fn()) return;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(30);
  }
}

let failures = 0;
async function check(name, fn) {
  try {
    await fn();
    console.log(`ok - ${name}`);
  } catch (e) {
    failures++;
    console.log(`not ok - ${name}\n  ${String(e.stack ?? e).split("\n").slice(0, 6).join("\n  ")}`);
  }
}

async function families(alice, bob, root) {
  const raw = (p, headers = {}, init = {}) => fetch(url + p, { ...init, headers: { "content-type": "application/json", ...headers } });

  if (opts.lua) {
    await check("the Lua authenticate: its status and message, or 401", async () => {
      const r = await raw("/threads/search", {}, { method: "POST", body: "{}" });
      assert.equal(r.status, 401);
      assert.match((await r.json()).detail, /Missing authentication/);
      const r2 = await raw("/threads/search", { authorization: "Bearer nope" }, { method: "POST", body: "{}" });
      assert.equal(r2.status, 401);
      assert.equal((await r2.json()).detail, "Invalid token");
    });
  }
  if (!opts.lua) await check("bad tokens of every kind: 401 with a message, the server lives on", async () => {
    const now = Math.floor(Date.now() / 1000);
    const cases = [
      ["no header", null, /Missing authentication/],
      ["expired", jwt({ sub: ALICE, exp: now - 10 }), /token expired/],
      ["not yet valid", jwt({ sub: ALICE, nbf: now + 600 }), /not valid yet/],
      ["alg none", jwt({ sub: ALICE }, { alg: "none" }), /algorithm 'none'/],
      ["alg HS512", jwt({ sub: ALICE }, { header: { alg: "HS512" } }), /algorithm 'HS512'/],
      ["wrong key", jwt({ sub: ALICE }, { secret: "another secret, long enough to be a key" }), /bad signature/],
      ["wrong audience", jwt({ sub: ALICE, aud: "other" }), /wrong audience/],
      ["wrong issuer", jwt({ sub: ALICE, iss: "https://evil.example" }), /wrong issuer/],
      ["no identity", jwt({ sub: undefined }), /no "sub" claim/],
      ["malformed base64", "e$$.e30.abc", /not base64url JSON/],
      ["not a JWT", "a.b", /not a JWT|Invalid/],
      ["oversized", `${"A".repeat(5000)}.${"B".repeat(5000)}.C`, /longer than/],
    ];
    for (const [what, token, re] of cases) {
      const r = await raw("/threads/search", token ? { authorization: `Bearer ${token}` } : {}, { method: "POST", body: "{}" });
      assert.equal(r.status, 401, `${what}: status`);
      const body = await r.json();
      assert.match(body.detail, re, `${what}: ${body.detail}`);
    }
    assert.equal((await raw("/ok")).status, 200, "GET /ok stays open");
  });

  let at, bt;
  await check("threads: create stamps the owner; get, update, delete, copy of another tenant's: 404", async () => {
    at = await alice.threads.create({ metadata: { topic: "a", owner: BOB } });
    bt = await bob.threads.create({ metadata: { topic: "b" } });
    assert.equal(at.metadata.owner, ALICE, "the owner is the creator, whatever the body said");
    assert.equal(bt.metadata.owner, BOB);
    assert.equal((await alice.threads.get(at.thread_id)).thread_id, at.thread_id);
    assert.equal(await status(bob.threads.get(at.thread_id)), 404);
    assert.equal(await status(bob.threads.update(at.thread_id, { metadata: { x: 1 } })), 404);
    assert.equal(await status(bob.threads.delete(at.thread_id)), 404);
    assert.equal(await status(bob.threads.copy(at.thread_id)), 404);
    assert.equal(await status(bob.threads.create({ threadId: at.thread_id, ifExists: "do_nothing" })), 409);
    const patched = await alice.threads.update(at.thread_id, { metadata: { x: 1, owner: BOB } });
    assert.equal(patched.metadata.owner, ALICE, "a tenant cannot give a thread away");
    const copy = await alice.threads.copy(at.thread_id);
    assert.equal(copy.metadata.owner, ALICE);
    assert.equal((await root.threads.get(at.thread_id)).thread_id, at.thread_id, "the admin reads any thread");
  });

  await check("threads: search and count see only the tenant's threads; the admin sees all", async () => {
    const a = await alice.threads.search({ limit: 100 });
    const b = await bob.threads.search({ limit: 100 });
    assert.ok(a.length >= 2 && a.every((t) => t.metadata.owner === ALICE), JSON.stringify(a.map((t) => t.metadata)));
    assert.ok(b.length >= 1 && b.every((t) => t.metadata.owner === BOB));
    assert.deepEqual(await bob.threads.search({ metadata: { owner: ALICE } }), [], "asking for another owner: nothing");
    assert.equal(await alice.threads.count(), a.length);
    assert.equal(await bob.threads.count(), b.length);
    const all = await root.threads.search({ limit: 100 });
    assert.equal(all.length, a.length + b.length);
    const page = await alice.threads.search({ limit: 1, offset: 1 });
    assert.equal(page.length, 1);
    assert.equal(page[0].metadata.owner, ALICE, "a page holds only the tenant's threads");
  });

  await check("state, history and update_state: the owner's; 404 for the other tenant", async () => {
    await alice.runs.wait(at.thread_id, "notes", { input: { note: "first" } });
    const st = await alice.threads.getState(at.thread_id);
    assert.deepEqual(st.values.notes, [`${ALICE}: first`], "the graph sees its user (langgraph_auth_user)");
    assert.equal(await status(bob.threads.getState(at.thread_id)), 404);
    assert.equal(await status(bob.threads.getHistory(at.thread_id)), 404);
    assert.equal(await status(bob.threads.updateState(at.thread_id, { values: { note: "x" } })), 404);
    assert.ok((await alice.threads.getHistory(at.thread_id)).length >= 1);
  });

  await check("runs: create, list, get, join, stream and join with Last-Event-ID; the other tenant: 404", async () => {
    const run = await alice.runs.create(at.thread_id, "notes", {
      input: { note: "second" }, streamMode: ["updates"], streamResumable: true,
      config: { configurable: { langgraph_auth_user: { identity: BOB } } },
    });
    await alice.runs.join(at.thread_id, run.run_id);
    assert.equal((await alice.threads.getState(at.thread_id)).values.by, ALICE, "a forged langgraph_auth_user is replaced");
    assert.equal((await alice.runs.get(at.thread_id, run.run_id)).run_id, run.run_id);
    assert.ok((await alice.runs.list(at.thread_id)).length >= 2);
    const all = await collect(alice.runs.joinStream(at.thread_id, run.run_id, { lastEventId: "-1" }));
    assert.ok(all.some((c) => c.event === "updates"), JSON.stringify(all));
    const rest = await collect(alice.runs.joinStream(at.thread_id, run.run_id, { lastEventId: "0" }));
    assert.ok(rest.length === all.length - 1, "reconnect after event 0");
    for (const [what, p] of [
      ["get", () => bob.runs.get(at.thread_id, run.run_id)],
      ["list", () => bob.runs.list(at.thread_id)],
      ["join", () => bob.runs.join(at.thread_id, run.run_id)],
      ["joinStream", () => collect(bob.runs.joinStream(at.thread_id, run.run_id, { lastEventId: "-1" }))],
      ["cancel", () => bob.runs.cancel(at.thread_id, run.run_id)],
      ["delete", () => bob.runs.delete(at.thread_id, run.run_id)],
      ["create", () => bob.runs.create(at.thread_id, "notes", { input: { note: "x" } })],
      ["wait", () => bob.runs.wait(at.thread_id, "notes", { input: { note: "x" } })],
      ["stream", () => collect(bob.runs.stream(at.thread_id, "notes", { input: { note: "x" } }))],
    ]) {
      assert.equal(await status(p()), 404, `bob's ${what} of alice's run`);
    }
    const chunks = await collect(alice.runs.stream(at.thread_id, "notes", { input: { note: "third" }, streamMode: "values" }));
    assert.ok(chunks.some((c) => c.event === "values" && c.data.by === ALICE));
    // POST /runs/cancel: another tenant's thread or runs are not theirs to cancel.
    const r = await raw("/runs/cancel", { authorization: bearer(BOB) },
      { method: "POST", body: JSON.stringify({ thread_id: at.thread_id }) });
    assert.equal(r.status, 404);
    const r2 = await raw("/runs/cancel", { authorization: bearer(BOB) },
      { method: "POST", body: JSON.stringify({ run_ids: [run.run_id] }) });
    assert.equal(r2.status, 404);
  });

  await check("stateless runs and if_not_exists create: the thread made is the user's", async () => {
    const out = await bob.runs.wait(null, "notes", { input: { note: "once" }, onCompletion: "keep" });
    assert.equal(out.by, BOB);
    const tid = crypto.randomUUID();
    await bob.runs.wait(tid, "notes", { input: { note: "made" }, ifNotExists: "create" });
    assert.equal((await bob.threads.get(tid)).metadata.owner, BOB);
    assert.equal(await status(alice.threads.get(tid)), 404);
  });

  await check("crons: create stamps the owner; search and count see only the tenant's; another's: 404", async () => {
    const ac = await alice.crons.createForThread(at.thread_id, "notes", { schedule: "0 0 1 1 *", input: { note: "cron" } });
    const bc = await bob.crons.create("notes", { schedule: "0 0 1 1 *", input: { note: "cron" } });
    assert.equal(await status(bob.crons.createForThread(at.thread_id, "notes", { schedule: "0 0 1 1 *" })), 404);
    const as = await alice.crons.search({});
    assert.deepEqual(as.map((c) => c.cron_id), [ac.cron_id]);
    assert.deepEqual((await bob.crons.search({})).map((c) => c.cron_id), [bc.cron_id]);
    assert.equal(await alice.crons.count({}), 1);
    assert.equal((await root.crons.search({})).length, 2);
    assert.equal(await status(bob.crons.delete(ac.cron_id)), 404);
    await alice.crons.delete(ac.cron_id);
    await bob.crons.delete(bc.cron_id);
  });

  await check("an admin's run on a tenant's thread leaves it the tenant's", async () => {
    await root.runs.wait(bt.thread_id, "notes", { input: { note: "by the admin" } });
    assert.equal((await bob.threads.get(bt.thread_id)).metadata.owner, BOB);
    assert.equal(await status(alice.threads.get(bt.thread_id)), 404);
  });

  await check("a stateless cron's fire: its thread and run are the cron creator's (404 and an empty page for the other tenant)", async () => {
    // The server's cron clock runs a minute ahead (SST_SERVE_CRON_CLOCK_OFFSET_MS): a cron
    // due at the coming minute fires at the next tick.
    const into = Date.now() % 60000;
    if (into > 56000) await sleep(60000 - into + 200);
    const minute = new Date(Date.now() + 60000).getUTCMinutes();
    const cron = await alice.crons.create("notes", { schedule: `${minute} * * * *`, input: { note: "fired" }, onRunCompleted: "keep" });
    const tid = uuid5(`thread:${Date.parse(cron.next_run_date)}`, cron.cron_id);
    let thread;
    await waitFor("the cron's thread, idle", async () => {
      try {
        thread = await root.threads.get(tid);
        return thread.status === "idle" && thread.values?.by !== undefined;
      } catch (e) {
        if ((e.status ?? e.response?.status) === 404) return false;
        throw e;
      }
    });
    assert.equal(thread.metadata.owner, ALICE, "the thread a fire makes is the cron creator's");
    assert.equal(thread.values.by, ALICE, "the graph sees the cron creator (langgraph_auth_user)");
    assert.equal((await alice.threads.get(tid)).thread_id, tid);
    assert.ok((await alice.threads.search({ limit: 100 })).some((t) => t.thread_id === tid), "in the creator's search");
    const runs = await alice.runs.list(tid);
    assert.equal(runs.length, 1);
    assert.equal(runs[0].metadata.owner, ALICE, "the run is the cron creator's");
    assert.equal(await status(bob.threads.get(tid)), 404);
    assert.equal(await status(bob.runs.list(tid)), 404);
    assert.ok(!(await bob.threads.search({ limit: 100 })).some((t) => t.thread_id === tid), "not in the other tenant's search");
    await alice.crons.delete(cron.cron_id);
    await alice.threads.delete(tid);
  });

  await check("assistants: a tenant's own are theirs; the graph's own are shared (read-only but for the admin)", async () => {
    const a = await alice.assistants.create({ graphId: "notes", name: "alice's" });
    assert.equal(a.metadata.owner, ALICE);
    if (opts.lua) {
      // examples/auth/custom: everyone reads every assistant; only the owner changes one.
      assert.equal((await bob.assistants.get(a.assistant_id)).assistant_id, a.assistant_id);
      assert.equal(await status(bob.assistants.update(a.assistant_id, { name: "mine" })), 404);
      assert.equal(await status(bob.assistants.delete(a.assistant_id)), 404);
      const shared = (await bob.assistants.search({ limit: 100 })).find((x) => x.metadata.owner === undefined);
      assert.equal(await status(bob.assistants.update(shared.assistant_id, { name: "x" })), 404);
      assert.equal((await root.assistants.update(a.assistant_id, { name: "root's" })).name, "root's");
      await alice.assistants.delete(a.assistant_id);
      return;
    }
    assert.equal(await status(bob.assistants.get(a.assistant_id)), 404);
    assert.equal(await status(bob.assistants.update(a.assistant_id, { name: "mine" })), 404);
    assert.equal(await status(bob.assistants.delete(a.assistant_id)), 404);
    assert.equal(await status(bob.runs.wait(null, a.assistant_id, { input: { note: "x" } })), 404);
    const bs = await bob.assistants.search({ limit: 100 });
    assert.ok(!bs.some((x) => x.assistant_id === a.assistant_id));
    assert.ok(bs.some((x) => x.graph_id === "notes" && x.metadata.owner === undefined), "the graph's own assistant is shared");
    assert.equal(await bob.assistants.count(), bs.length);
    const shared = bs.find((x) => x.metadata.owner === undefined);
    assert.equal(await status(bob.assistants.update(shared.assistant_id, { name: "x" })), 403);
    assert.equal((await alice.assistants.search({ limit: 100 })).length, bs.length + 1);
    assert.equal((await root.assistants.get(a.assistant_id)).assistant_id, a.assistant_id);
    await alice.assistants.delete(a.assistant_id);
  });

  await check("store: namespaces begin with the user's identity; search and list see only theirs", async () => {
    await alice.store.putItem([ALICE, "notes"], "k1", { text: "a" });
    await bob.store.putItem([BOB, "notes"], "k1", { text: "b" });
    assert.equal(await status(bob.store.putItem([ALICE, "notes"], "k2", { text: "x" })), 403);
    assert.equal(await status(bob.store.getItem([ALICE, "notes"], "k1")), 403);
    assert.equal(await status(bob.store.deleteItem([ALICE, "notes"], "k1")), 403);
    assert.equal(await status(bob.store.searchItems([ALICE])), 403);
    assert.equal((await alice.store.getItem([ALICE, "notes"], "k1")).value.text, "a");
    const found = await bob.store.searchItems([]);
    assert.deepEqual(found.items.map((i) => i.namespace), [[BOB, "notes"]]);
    const ns = await bob.store.listNamespaces();
    assert.deepEqual(ns.namespaces, [[BOB, "notes"]]);
    assert.ok((await root.store.listNamespaces()).namespaces.length >= 2);
  });

  await check("GET /info needs a user; the open routes do not", async () => {
    assert.equal((await raw("/info")).status, 401);
    assert.equal((await raw("/info", { authorization: bearer(ALICE) })).status, 200);
    assert.equal((await raw("/openapi.json")).status, 200);
  });
}

// The audit: a client that keeps every response body of its user.
function recording(sub, permissions = []) {
  const seen = [];
  const c = new Client({
    apiUrl: url,
    defaultHeaders: { authorization: bearer(sub, permissions) },
    callerOptions: {
      fetch: async (...args) => {
        const res = await fetch(...args);
        const text = await res.clone().text();
        // What the request itself named (a 404 says "Thread with ID <asked> not found").
        const asked = `${args[0]} ${typeof args[1]?.body === "string" ? args[1].body : ""}`;
        seen.push({ asked, text });
        return res;
      },
    },
  });
  return { c, seen, sub };
}

async function concurrent() {
  await check("60 requests at once by three users (HTTP threads, the Lua state's lock): each sees its own", async () => {
    const cs = [[ALICE, clientOf(ALICE)], [BOB, clientOf(BOB)]];
    const results = await Promise.all(Array.from({ length: 60 }, (_, i) => {
      const [who, c] = cs[i % 2];
      return (i % 3 === 0 ? c.threads.count().then((n) => ({ who, n })) : c.threads.search({ limit: 50 }).then((ts) => ({ who, ts })));
    }));
    for (const r of results) {
      if (r.ts) assert.ok(r.ts.length > 0 && r.ts.every((t) => t.metadata.owner === r.who), `${r.who} saw ${JSON.stringify(r.ts.map((t) => t.metadata.owner))}`);
      else assert.ok(r.n > 0);
    }
  });
}

async function audit() {
  await check(`random audit: ${opts.ops} operations by three users, no response shows another tenant`, async () => {
    const users = [recording(ALICE), recording(BOB), recording(ROOT, ["admin"])];
    const made = new Map(users.map((u) => [u.sub, []])); // ids each user made
    let seed = 12345;
    const rnd = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
    for (let i = 0; i < opts.ops; i++) {
      const u = users[rnd(3)];
      const mine = made.get(u.sub);
      const others = [...made.values()].flat();
      const any = (list) => (list.length ? list[rnd(list.length)] : crypto.randomUUID());
      const op = rnd(10);
      try {
        if (op === 0 || mine.length === 0) mine.push((await u.c.threads.create({ metadata: { i } })).thread_id);
        else if (op === 1) await u.c.threads.search({ limit: 10, offset: rnd(5) });
        else if (op === 2) await u.c.threads.get(any(others));
        else if (op === 3) await u.c.runs.wait(any(mine), "notes", { input: { note: `n${i}` } });
        else if (op === 4) await u.c.threads.getState(any(others));
        else if (op === 5) await u.c.threads.count();
        else if (op === 6) await u.c.runs.list(any(others));
        else if (op === 7) await u.c.store.putItem([u.sub, "a"], `k${i}`, { i });
        else if (op === 8) await u.c.store.searchItems([u.sub], { limit: 5 });
        else await u.c.threads.getHistory(any(others), { limit: 2 });
      } catch (e) {
        if (![403, 404, 409].includes(e.status)) throw e;
      }
    }
    for (const [self, other] of [[0, 1], [1, 0]]) {
      const u = users[self], o = users[other];
      const theirs = [o.sub, ...made.get(o.sub), ...made.get(ROOT)];
      for (const { asked, text } of u.seen) {
        for (const id of theirs) {
          assert.ok(asked.includes(id) || !text.includes(id), `${u.sub} was shown ${id}: ${text.slice(0, 300)}`);
        }
      }
      assert.ok(u.seen.length > opts.ops / 5, `${u.sub} made requests`);
    }
  });
}

// A Lua auth file whose filter is LangGraph's $contains: a thread is shared by its
// participants (its creator and whom they invite), and every other thread action is
// limited to threads whose participants hold the user. Search, count and paging apply it.
const PARTICIPANTS_LUA = `
local users = dofile(os.getenv("AUTH_USERS"))
local auth = { on = {} }
function auth.authenticate(request)
  local token = (request.headers.authorization or ""):match("^[Bb]earer%s+(.+)$")
  local user = token and users[token]
  if not user then error({ status = 401, message = "Invalid token" }) end
  return user
end
auth.on.threads = function(ctx, value)
  if ctx.action == "create" then
    value.metadata = value.metadata or {}
    local p = { ctx.user.identity }
    for _, x in ipairs(value.metadata.invite or {}) do p[#p + 1] = x end
    value.metadata.participants = p
    value.metadata.invite = nil
    return nil
  end
  return { participants = { ["$contains"] = ctx.user.identity } }
end
return auth
`;

async function participants(db) {
  await check("a $contains filter (LangGraph's): search, count and paging see the threads whose participants hold the user", async () => {
    const dir = fs.mkdtempSync(path.join(tmp, "participants-"));
    fs.writeFileSync(path.join(dir, "auth.lua"), PARTICIPANTS_LUA);
    fs.writeFileSync(path.join(dir, "langgraph.json"), JSON.stringify({
      graphs: { notes: path.join(HERE, "..", "..", "examples", "auth", "notes.lua") },
      auth: { path: "./auth.lua" },
    }));
    const srv = await startServer({
      superstep: opts.superstep, config: path.join(dir, "langgraph.json"),
      env: { AUTH_USERS: usersFile },
      args: ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", "1"],
      timeoutMs: 20000 * TIME_SCALE,
    });
    try {
      const as = (sub) => new Client({ apiUrl: srv.url, defaultHeaders: { authorization: `Bearer ${luaToken(sub)}` } });
      const alice = as(ALICE), bob = as(BOB), root = as(ROOT);
      const t1 = await alice.threads.create({ metadata: { invite: [BOB], n: 1 } });
      const t2 = await alice.threads.create({ metadata: { n: 2 } });
      const t3 = await bob.threads.create({ metadata: { n: 3 } });
      assert.deepEqual(t1.metadata.participants, [ALICE, BOB]);
      const ids = (list) => list.map((t) => t.thread_id).sort();
      assert.deepEqual(ids(await alice.threads.search({ limit: 100 })), [t1.thread_id, t2.thread_id].sort());
      assert.deepEqual(ids(await bob.threads.search({ limit: 100 })), [t1.thread_id, t3.thread_id].sort());
      assert.deepEqual(await root.threads.search({ limit: 100 }), []);
      assert.equal(await alice.threads.count(), 2);
      assert.equal(await bob.threads.count(), 2);
      assert.equal(await root.threads.count(), 0);
      const pages = [...await bob.threads.search({ limit: 1, offset: 0 }), ...await bob.threads.search({ limit: 1, offset: 1 })];
      assert.deepEqual(ids(pages), [t1.thread_id, t3.thread_id].sort(), "pages hold the user's threads only");
      assert.deepEqual(await bob.threads.search({ limit: 1, offset: 2 }), []);
      assert.deepEqual(ids(await bob.threads.search({ metadata: { n: 1 } })), [t1.thread_id], "with the body's metadata filter");
      assert.equal((await bob.threads.get(t1.thread_id)).thread_id, t1.thread_id);
      assert.equal(await status(bob.threads.get(t2.thread_id)), 404);
      assert.equal(await status(alice.threads.get(t3.thread_id)), 404);
    } finally {
      await srv.stop(10000 * TIME_SCALE);
    }
  });
}

let server, tmp, schema, pgBase, usersFile;
function pgSchema() {
  let base = process.env.SST_PGTEST_URL || "";
  const file = process.env.SST_PGTEST_URL_FILE;
  if (!base && file && fs.existsSync(file)) base = fs.readFileSync(file, "utf8").trim();
  if (!base) return null;
  pgBase = base;
  schema = `t_users_${process.pid}`;
  execFileSync("psql", ["-q", base, "-c",
    `SET client_min_messages=warning; DROP SCHEMA IF EXISTS ${schema} CASCADE; CREATE SCHEMA ${schema}`]);
  return `${base}${base.includes("?") ? "&" : "?"}options=-csearch_path%3D${schema}`;
}

try {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sst-users-"));
  const db = opts.pg ? pgSchema() : path.join(tmp, "users.db");
  if (db === null) {
    if (process.env.SST_REQUIRE_POSTGRES === "1") throw new Error("--pg without a test PostgreSQL server");
    console.log("users.mjs: --pg: no test PostgreSQL server: skipped");
    process.exit(0);
  }
  usersFile = path.join(tmp, "users.lua");
  fs.writeFileSync(usersFile, `return {\n${[[ALICE, []], [BOB, []], [ROOT, ["admin"]]].map(([id, p]) =>
    `  [${JSON.stringify(luaToken(id))}] = { identity = ${JSON.stringify(id)}, permissions = { ${p.map((x) => JSON.stringify(x)).join(", ")} } },`).join("\n")}\n}\n`);
  server = await startServer({
    superstep: opts.superstep, config: opts.lua ? CUSTOM : EXAMPLE,
    env: { AUTH_JWT_SECRET: SECRET, AUTH_USERS: usersFile, SST_SERVE_CRON_CLOCK_OFFSET_MS: "60000" },
    args: ["--host", "127.0.0.1", "--port", "0", "--db", db, "--workers", "2"],
    timeoutMs: 20000 * TIME_SCALE,
  });
  url = server.url;
  console.log(`users.mjs: ${url} (db ${db})`);
  await families(clientOf(ALICE), clientOf(BOB), clientOf(ROOT, ["admin"]));
  await audit();
  await concurrent();
  // The SDK script auth_peer/compare.mjs runs against superstep and LangGraph.js's server.
  if (!opts.lua) await check("the cases of auth_cases.mjs (the peer comparison's script): each answers its status", async () => {
    const wrong = (await runAuthCases(url, SECRET)).filter((c) => c.status !== c.want);
    assert.deepEqual(wrong.map((c) => `${c.name}: ${c.status} (want ${c.want}) ${JSON.stringify(c.shape)}`), []);
  });
  if (opts.lua) await participants(opts.pg ? db : path.join(tmp, "participants.db"));
  if (!opts.pg) {
    await check("a server with auth may listen on any address (it authenticates every request)", async () => {
      const r = await runServerExpectingExit({
        superstep: opts.superstep, config: opts.lua ? CUSTOM : EXAMPLE,
        env: { AUTH_JWT_SECRET: SECRET, AUTH_USERS: usersFile },
        args: ["--host", "0.0.0.0", "--port", "0", "--db", path.join(tmp, "any.db")],
        timeoutMs: 20000 * TIME_SCALE,
      });
      assert.equal(r.listening, true, `it listens: ${r.stderr}`);
    });
  }
} catch (e) {
  failures++;
  console.log(`not ok - ${e.stack ?? e}`);
} finally {
  if (server) {
    const res = await server.stop(10000 * TIME_SCALE);
    if (res.timedOut || res.code !== 0) {
      failures++;
      console.log(`not ok - the server exits cleanly (code ${res.code}, signal ${res.signal})\n${server.stderr().slice(-3000)}`);
    }
  }
  if (schema && !opts.keep) {
    execFileSync("psql", ["-q", pgBase, "-c", `SET client_min_messages=warning; DROP SCHEMA IF EXISTS ${schema} CASCADE`]);
  }
  if (tmp && !opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
}
console.log(failures === 0 ? "users.mjs: all passed" : `users.mjs: ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
