// The users-and-ownership cases (docs/auth.md) as one SDK script that any server with the
// example auth of examples/auth runs: three users (two tenants and an admin), each a
// LangGraph JS SDK Client, every endpoint family, bad tokens. Each case is one SDK call;
// what it records is the last HTTP exchange the call made, reduced to its status and its
// shape (authShape below), so two servers can be compared case by case.
//
// users.mjs runs it against `superstep serve` and checks each case's status against `want`;
// auth_peer/compare.mjs runs it against superstep and LangGraph.js's own server (with
// auth_peer/auth.ts, the same auth written with its Auth class) and compares the records.
import crypto from "node:crypto";
import { Client } from "@langchain/langgraph-sdk";

export const ISSUER = "https://auth.example.com";
export const AUDIENCE = "superstep";
// Identities unlike anything else in a response, so that the shapes name them exactly.
export const ALICE = "tenant-alice-7c1f", BOB = "tenant-bob-92e4", ROOT = "ops-root-d05a";
const NAMES = { [ALICE]: "alice", [BOB]: "bob", [ROOT]: "admin" };

const b64 = (o) => Buffer.from(typeof o === "string" ? o : JSON.stringify(o)).toString("base64url");
// An HS256 JWT of the example's issuer and audience, valid for an hour, unless claims say else.
export function jwt(secret, claims, { alg = "HS256", key = secret, header = {} } = {}) {
  const h = b64({ alg, typ: "JWT", ...header });
  const p = b64({ iss: ISSUER, aud: AUDIENCE, exp: Math.floor(Date.now() / 1000) + 3600, ...claims });
  const sig = alg === "none" ? "" : crypto.createHmac("sha256", key).update(`${h}.${p}`).digest("base64url");
  return `${h}.${p}.${sig}`;
}

const who = (v) => NAMES[v] ?? (typeof v === "string" ? "other" : String(v));
const owners = (list, of) => [...new Set(list.map(of).map(who))].sort().join(",");

// What a response says about ownership, independent of the server's other fields:
// the body's kind; for a list, its length and whose items it holds; for one resource,
// its owner (metadata.owner) and the user the graph signed with (`by`); for a stream, its
// events. An error is kind "error" whatever its body, which `format` names ("json" for
// {"detail": ...}, "text" for a plain body, "empty"), and `message` holds its text (ids as
// <id>): both are recorded, and compareKey leaves them out.
const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;
export function authShape(status, contentType, text) {
  const shape = { status };
  const ct = (contentType || "").split(";")[0].trim();
  if (status >= 400) {
    let message = text.trim(), format = text === "" ? "empty" : "text";
    try {
      const body = JSON.parse(text);
      format = "json";
      message = typeof body?.detail === "string" ? body.detail : JSON.stringify(body);
    } catch {}
    return { ...shape, kind: "error", format, message: message.replace(UUID, "<id>") };
  }
  if (ct === "text/event-stream") {
    const events = [...text.matchAll(/^event: (.*)$/gm)].map((m) => m[1]);
    shape.kind = "sse";
    shape.events = [...new Set(events)].filter((e) => e !== "metadata").sort().join(",");
    const by = [...text.matchAll(/"by":"([^"]*)"/g)].map((m) => who(m[1]));
    if (by.length) shape.by = [...new Set(by)].join(",");
    return shape;
  }
  if (text === "") return { ...shape, kind: "empty" };
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    return { ...shape, kind: "text" };
  }
  if (body === null) return { ...shape, kind: "null" };
  if (Array.isArray(body)) {
    shape.kind = "list";
    shape.n = body.length;
    if (body.length && body[0]?.metadata) shape.owners = owners(body, (x) => x.metadata?.owner);
    return shape;
  }
  if (typeof body !== "object") return { ...shape, kind: typeof body };
  if (Array.isArray(body.items)) return { ...shape, kind: "items", n: body.items.length, owners: owners(body.items, (x) => x.namespace?.[0]) };
  if (Array.isArray(body.namespaces)) return { ...shape, kind: "namespaces", n: body.namespaces.length, owners: owners(body.namespaces, (x) => x[0]) };
  shape.kind = "object";
  if (body.metadata && typeof body.metadata === "object") shape.owner = who(body.metadata.owner);
  if (typeof body.by === "string") shape.by = who(body.by);
  if (body.values && typeof body.values.by === "string") shape.by = who(body.values.by);
  return shape;
}

// The part of a shape two servers are compared on: all but an error's body format and text.
export function compareKey(shape) {
  const { format, message, ...rest } = shape ?? {};
  return JSON.stringify(rest);
}

// A Client for `authorization` whose every exchange is kept, to be reduced after the call.
function recordingClient(url, authorization) {
  const log = [];
  const c = new Client({
    apiUrl: url,
    apiKey: null,
    defaultHeaders: authorization ? { authorization } : {},
    callerOptions: {
      maxRetries: 0,
      fetch: async (...args) => {
        const res = await fetch(...args);
        log.push(res.clone());
        return res;
      },
    },
  });
  return { c, log };
}

// Runs the cases against `url` with tokens signed by `secret`; returns
// [{name, want, status, shape}] in order. `want` is the status superstep answers.
export async function runAuthCases(url, secret) {
  const token = (sub, permissions = []) => jwt(secret, { sub, permissions });
  const alice = recordingClient(url, `Bearer ${token(ALICE)}`);
  const bob = recordingClient(url, `Bearer ${token(BOB)}`);
  const root = recordingClient(url, `Bearer ${token(ROOT, ["admin"])}`);
  const out = [];
  const state = {};
  const collect = async (gen) => { for await (const _ of gen); };

  async function run(name, want, user, fn) {
    const before = user.log.length;
    let err = null;
    try {
      const v = await fn(user.c);
      if (v && typeof v[Symbol.asyncIterator] === "function") await collect(v);
    } catch (e) {
      err = e;
    }
    const res = user.log[user.log.length - 1];
    if (user.log.length === before || !res) {
      out.push({ name, want, status: "no response", shape: { status: "no response", error: String(err?.message ?? err) } });
      return null;
    }
    const text = await res.text();
    const shape = authShape(res.status, res.headers.get("content-type"), text);
    out.push({ name, want, status: res.status, shape });
    if (res.status >= 300 || !text) return null;
    try { return JSON.parse(text); } catch { return text; }
  }

  // A route the SDK has no call for, fetched as it would be.
  async function raw(name, want, path, authorization) {
    const r = await fetch(`${url}${path}`, { headers: authorization ? { authorization } : {} });
    const shape = authShape(r.status, r.headers.get("content-type"), await r.text());
    if (r.status < 300) for (const k of Object.keys(shape)) if (k !== "status" && k !== "kind") delete shape[k];
    out.push({ name, want, status: r.status, shape });
  }

  // ---- bad tokens: 401 with a message ----
  const now = Math.floor(Date.now() / 1000);
  const bad = [
    ["no header", null],
    ["expired", jwt(secret, { sub: ALICE, exp: now - 10 })],
    ["not yet valid", jwt(secret, { sub: ALICE, nbf: now + 600 })],
    ["alg none", jwt(secret, { sub: ALICE }, { alg: "none" })],
    ["alg HS512", jwt(secret, { sub: ALICE }, { header: { alg: "HS512" } })],
    ["wrong key", jwt(secret, { sub: ALICE }, { key: "another secret, long enough to be a key" })],
    ["wrong audience", jwt(secret, { sub: ALICE, aud: "other" })],
    ["wrong issuer", jwt(secret, { sub: ALICE, iss: "https://evil.example" })],
    ["no identity", jwt(secret, { sub: undefined })],
    ["malformed base64", "e$$.e30.abc"],
    ["oversized", `${"A".repeat(5000)}.${"B".repeat(5000)}.C`],
  ];
  for (const [what, t] of bad) {
    await run(`bad token: ${what}: threads.search`, 401, recordingClient(url, t ? `Bearer ${t}` : null), (c) => c.threads.search({}));
  }
  await raw("no token: GET /info", 401, "/info", null);
  await raw("no token: GET /ok", 200, "/ok", null);

  // ---- threads ----
  const at = await run("threads.create by alice (metadata.owner: bob in the body)", 200, alice, (c) => c.threads.create({ metadata: { topic: "a", owner: BOB } }));
  const bt = await run("threads.create by bob", 200, bob, (c) => c.threads.create({ metadata: { topic: "b" } }));
  state.at = at?.thread_id ?? crypto.randomUUID();
  state.bt = bt?.thread_id ?? crypto.randomUUID();
  await run("threads.get: alice's own", 200, alice, (c) => c.threads.get(state.at));
  await run("threads.get: bob reads alice's", 404, bob, (c) => c.threads.get(state.at));
  await run("threads.get: the admin reads alice's", 200, root, (c) => c.threads.get(state.at));
  await run("threads.update: bob updates alice's", 404, bob, (c) => c.threads.update(state.at, { metadata: { x: 1 } }));
  await run("threads.update: alice gives hers to bob", 200, alice, (c) => c.threads.update(state.at, { metadata: { x: 1, owner: BOB } }));
  await run("threads.delete: bob deletes alice's", 404, bob, (c) => c.threads.delete(state.at));
  await run("threads.copy: bob copies alice's", 404, bob, (c) => c.threads.copy(state.at));
  await run("threads.copy: alice copies hers", 200, alice, (c) => c.threads.copy(state.at));
  await run("threads.create: bob with alice's thread id", 409, bob, (c) => c.threads.create({ threadId: state.at, ifExists: "do_nothing" }));
  await run("threads.search by alice", 200, alice, (c) => c.threads.search({ limit: 100 }));
  await run("threads.search by bob", 200, bob, (c) => c.threads.search({ limit: 100 }));
  await run("threads.search by bob for owner alice", 200, bob, (c) => c.threads.search({ metadata: { owner: ALICE } }));
  await run("threads.search by the admin", 200, root, (c) => c.threads.search({ limit: 100 }));
  await run("threads.search by alice, a page (limit 1 offset 1)", 200, alice, (c) => c.threads.search({ limit: 1, offset: 1 }));
  await run("threads.count by alice", 200, alice, (c) => c.threads.count());
  await run("threads.count by bob", 200, bob, (c) => c.threads.count());

  // ---- state, history ----
  await run("runs.wait by alice on hers (the graph sees its user)", 200, alice, (c) => c.runs.wait(state.at, "notes", { input: { note: "first" } }));
  await run("threads.getState: alice's own", 200, alice, (c) => c.threads.getState(state.at));
  await run("threads.getState: bob reads alice's", 404, bob, (c) => c.threads.getState(state.at));
  await run("threads.getHistory: bob reads alice's", 404, bob, (c) => c.threads.getHistory(state.at));
  await run("threads.updateState: bob on alice's", 404, bob, (c) => c.threads.updateState(state.at, { values: { note: "x" } }));
  await run("threads.getHistory: alice's own", 200, alice, (c) => c.threads.getHistory(state.at));

  // ---- runs ----
  const run1 = await run("runs.create by alice (a forged langgraph_auth_user)", 200, alice, (c) => c.runs.create(state.at, "notes", {
    input: { note: "second" }, streamMode: ["updates"], streamResumable: true,
    config: { configurable: { langgraph_auth_user: { identity: BOB } } },
  }));
  state.run = run1?.run_id ?? crypto.randomUUID();
  await run("runs.joinStream by alice (Last-Event-ID -1)", 200, alice, (c) => c.runs.joinStream(state.at, state.run, { lastEventId: "-1" }));
  await run("runs.join by alice", 200, alice, (c) => c.runs.join(state.at, state.run));
  await run("runs.get by alice", 200, alice, (c) => c.runs.get(state.at, state.run));
  await run("runs.list by alice", 200, alice, (c) => c.runs.list(state.at));
  await run("runs.get: bob gets alice's", 404, bob, (c) => c.runs.get(state.at, state.run));
  await run("runs.list: bob lists alice's", 404, bob, (c) => c.runs.list(state.at));
  await run("runs.join: bob joins alice's", 404, bob, (c) => c.runs.join(state.at, state.run));
  await run("runs.joinStream: bob on alice's", 404, bob, (c) => c.runs.joinStream(state.at, state.run, { lastEventId: "-1" }));
  await run("runs.cancel: bob cancels alice's", 404, bob, (c) => c.runs.cancel(state.at, state.run));
  await run("runs.delete: bob deletes alice's", 404, bob, (c) => c.runs.delete(state.at, state.run));
  await run("runs.create: bob on alice's thread", 404, bob, (c) => c.runs.create(state.at, "notes", { input: { note: "x" } }));
  await run("runs.wait: bob on alice's thread", 404, bob, (c) => c.runs.wait(state.at, "notes", { input: { note: "x" } }));
  await run("runs.stream: bob on alice's thread", 404, bob, (c) => c.runs.stream(state.at, "notes", { input: { note: "x" } }));
  await run("runs.stream by alice on hers", 200, alice, (c) => c.runs.stream(state.at, "notes", { input: { note: "third" }, streamMode: "values" }));
  await run("threads.getState: alice's after the forged user", 200, alice, (c) => c.threads.getState(state.at));
  await run("runs.wait stateless by bob", 200, bob, (c) => c.runs.wait(null, "notes", { input: { note: "once" }, onCompletion: "keep" }));
  state.made = crypto.randomUUID();
  await run("runs.wait by bob, if_not_exists create", 200, bob, (c) => c.runs.wait(state.made, "notes", { input: { note: "made" }, ifNotExists: "create" }));
  await run("threads.get: bob's made thread", 200, bob, (c) => c.threads.get(state.made));
  await run("threads.get: alice reads bob's made thread", 404, alice, (c) => c.threads.get(state.made));
  await run("runs.wait: the admin on bob's thread", 200, root, (c) => c.runs.wait(state.bt, "notes", { input: { note: "by the admin" } }));
  await run("threads.get: bob's thread after the admin's run", 200, bob, (c) => c.threads.get(state.bt));

  // ---- crons ----
  const ac = await run("crons.createForThread by alice", 200, alice, (c) => c.crons.createForThread(state.at, "notes", { schedule: "0 0 1 1 *", input: { note: "cron" } }));
  await run("crons.createForThread: bob on alice's thread", 404, bob, (c) => c.crons.createForThread(state.at, "notes", { schedule: "0 0 1 1 *" }));
  await run("crons.search by alice", 200, alice, (c) => c.crons.search({}));
  await run("crons.search by bob", 200, bob, (c) => c.crons.search({}));
  state.cron = ac?.cron_id ?? crypto.randomUUID();
  await run("crons.delete: bob deletes alice's", 404, bob, (c) => c.crons.delete(state.cron));
  await run("crons.delete: alice deletes hers", 204, alice, (c) => c.crons.delete(state.cron));

  // ---- assistants ----
  const a = await run("assistants.create by alice", 200, alice, (c) => c.assistants.create({ graphId: "notes", name: "alice's" }));
  state.a = a?.assistant_id ?? crypto.randomUUID();
  await run("assistants.get: bob reads alice's", 404, bob, (c) => c.assistants.get(state.a));
  await run("assistants.update: bob updates alice's", 404, bob, (c) => c.assistants.update(state.a, { name: "mine" }));
  await run("assistants.delete: bob deletes alice's", 404, bob, (c) => c.assistants.delete(state.a));
  await run("runs.wait: bob runs alice's assistant", 404, bob, (c) => c.runs.wait(null, state.a, { input: { note: "x" } }));
  const bs = await run("assistants.search by bob", 200, bob, (c) => c.assistants.search({ limit: 100 }));
  await run("assistants.search by alice", 200, alice, (c) => c.assistants.search({ limit: 100 }));
  const shared = (Array.isArray(bs) ? bs.find((x) => x.metadata?.owner === undefined)?.assistant_id : null) ?? crypto.randomUUID();
  await run("assistants.get: bob reads the graph's own", 200, bob, (c) => c.assistants.get(shared));
  await run("assistants.update: bob updates the graph's own", 403, bob, (c) => c.assistants.update(shared, { name: "x" }));
  await run("assistants.get: the admin reads alice's", 200, root, (c) => c.assistants.get(state.a));
  await run("assistants.delete: alice deletes hers", 204, alice, (c) => c.assistants.delete(state.a));

  // ---- the store ----
  await run("store.putItem by alice in hers", 204, alice, (c) => c.store.putItem([ALICE, "notes"], "k1", { text: "a" }));
  await run("store.putItem by bob in his", 204, bob, (c) => c.store.putItem([BOB, "notes"], "k1", { text: "b" }));
  await run("store.putItem: bob in alice's", 403, bob, (c) => c.store.putItem([ALICE, "notes"], "k2", { text: "x" }));
  await run("store.getItem: bob in alice's", 403, bob, (c) => c.store.getItem([ALICE, "notes"], "k1"));
  await run("store.deleteItem: bob in alice's", 403, bob, (c) => c.store.deleteItem([ALICE, "notes"], "k1"));
  await run("store.searchItems: bob in alice's", 403, bob, (c) => c.store.searchItems([ALICE]));
  await run("store.getItem by alice in hers", 200, alice, (c) => c.store.getItem([ALICE, "notes"], "k1"));
  await run("store.searchItems by bob, no prefix", 200, bob, (c) => c.store.searchItems([]));
  await run("store.listNamespaces by bob", 200, bob, (c) => c.store.listNamespaces());
  await run("store.listNamespaces by the admin", 200, root, (c) => c.store.listNamespaces());

  // ---- the info route ----
  await raw("GET /info by alice", 200, "/info", `Bearer ${token(ALICE)}`);
  return out;
}
