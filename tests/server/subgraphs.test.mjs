// GET /assistants/{id}/subgraphs[/{namespace}]?recurse: client.assistants.getSubgraphs.
// The answer maps each subgraph's namespace (the node that runs it; with recurse the
// nested ones too, as "parent|child", depth first) to its schemas, shaped as
// getSchemas answers for the root graph (the SDK's `Subgraphs = Record<string,
// GraphSchema>`). Which subgraphs come follows LangGraph.js's Pregel.getSubgraphs
// (namespace, recurse), observed on its server: a namespace selects one ("a|b" needs
// recurse), a namespace naming no subgraph is 200 {}, and so is a graph without
// subgraphs. LangGraph.js's server answers each schema as {state, input, output,
// config} rather than the SDK's type, so the shape is checked against superstep only.
//
// Two levels of nesting are checked on a server of this file's own (SST_SUPERSTEP)
// serving a graph written here: outer (fields x, y, z) runs `mid` (x, y) as nodes
// "mid" and "mid2"; mid runs `leaf` (x) as "inner" and `leaf2` (w) as "other".
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { ON_PEER, client, hasGraph, makeClient, oursOnly, randomUUID, raw, rejects, uuid5 } from "./_lib.mjs";
import { startServer } from "./_server.mjs";

const SUPERSTEP = process.env.SST_SUPERSTEP;
const skipOwn = ON_PEER ? "superstep's own server (a Lua graph)"
  : (SUPERSTEP ? false : "needs SST_SUPERSTEP (run.mjs --superstep PATH): starts a server of its own");

// {"type": "object", "properties": {field: {title}}, "$schema": draft-07} as getSchemas gives
// it for fields with replace and no default (any value: no type to give).
const object = (...fields) => ({
  type: "object",
  properties: Object.fromEntries(fields.map((f) => [f, { title: f }])),
  $schema: "http://json-schema.org/draft-07/schema#",
});
const schemas = (graphId, ...fields) => ({
  graph_id: graphId,
  input_schema: object(...fields),
  output_schema: object(...fields),
  state_schema: object(...fields),
  config_schema: object(),
  context_schema: object(),
});

// nested.lua's child graph: fields topic and result (the parent's log is not the child's).
const NESTED = { child: schemas("nested", "result", "topic") };

async function needNested(t) {
  if (await hasGraph("nested")) return true;
  t.skip("the server has no graph \"nested\" (tests/server/graphs/nested.lua)");
  return false;
}

test("getSubgraphs(nested): its one subgraph, namespace \"child\", with the child's fields only",
  { skip: oursOnly("LangGraph.js answers {state, input, output, config}, not the SDK's GraphSchema") },
  async (t) => {
    if (!(await needNested(t))) return;
    const s = await client.assistants.getSubgraphs("nested");
    assert.deepEqual(s, NESTED);
    // The order of the answer's members too (JSON text, not only deep equality).
    assert.equal(JSON.stringify(s), JSON.stringify(NESTED));
    // The root's own schemas differ: they have `log`.
    const root = await client.assistants.getSchemas("nested");
    assert.deepEqual(Object.keys(root.state_schema.properties), ["log", "result", "topic"]);
    assert.deepEqual(Object.keys(s.child).sort(), Object.keys(root).sort(), "the same members as getSchemas");
  });

test("getSubgraphs by assistant uuid and by a user assistant of the graph: the same answer", async (t) => {
  if (!(await needNested(t))) return;
  const byGraph = await client.assistants.getSubgraphs("nested");
  assert.deepEqual(Object.keys(byGraph), ["child"]);
  assert.deepEqual(await client.assistants.getSubgraphs(uuid5("nested")), byGraph);
  const a = await client.assistants.create({ graphId: "nested", name: "sub-user" });
  try {
    assert.deepEqual(await client.assistants.getSubgraphs(a.assistant_id), byGraph);
    assert.deepEqual(await client.assistants.getSubgraphs(a.assistant_id, { namespace: "child" }), byGraph);
  } finally {
    await client.assistants.delete(a.assistant_id);
  }
  await rejects(client.assistants.getSubgraphs(a.assistant_id), 404, [a.assistant_id]);
});

test("getSubgraphs(nested, {recurse}): one level only, so the same", async (t) => {
  if (!(await needNested(t))) return;
  const plain = await client.assistants.getSubgraphs("nested");
  assert.deepEqual(await client.assistants.getSubgraphs("nested", { recurse: true }), plain);
  assert.deepEqual(await client.assistants.getSubgraphs("nested", { recurse: false }), plain);
});

test("getSubgraphs(nested, {namespace}): the one named; {} for a plain node or an unknown name", async (t) => {
  if (!(await needNested(t))) return;
  const plain = await client.assistants.getSubgraphs("nested");
  assert.deepEqual(await client.assistants.getSubgraphs("nested", { namespace: "child" }), plain);
  assert.deepEqual(await client.assistants.getSubgraphs("nested", { namespace: "child", recurse: true }), plain);
  // "finish" is a node that runs no subgraph; "work" is the child's node, not a subgraph.
  for (const namespace of ["finish", "nope", "chil", "child|work", "child|"]) {
    assert.deepEqual(await client.assistants.getSubgraphs("nested", { namespace }), {}, namespace);
    assert.deepEqual(await client.assistants.getSubgraphs("nested", { namespace, recurse: true }), {}, namespace);
  }
});

test("a graph without subgraphs: {} (with recurse and with a namespace too)", async () => {
  for (const g of ["chain", "counter"]) {
    assert.deepEqual(await client.assistants.getSubgraphs(g), {}, g);
    assert.deepEqual(await client.assistants.getSubgraphs(g, { recurse: true }), {}, g);
    assert.deepEqual(await client.assistants.getSubgraphs(g, { namespace: "a" }), {}, g);
  }
  const res = await raw("/assistants/chain/subgraphs");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /^application\/json/);
  assert.equal(res.text, "{}");
});

test("getSubgraphs of an unknown assistant is 404", async () => {
  await rejects(client.assistants.getSubgraphs("nope"), 404, ["nope"]);
  await rejects(client.assistants.getSubgraphs("nope", { namespace: "child", recurse: true }), 404, ["nope"]);
  const id = randomUUID();
  await rejects(client.assistants.getSubgraphs(id), 404, [id]);
  await rejects(client.assistants.getSubgraphs(id, { namespace: "child" }), 404, [id]);
});

test("only GET: POST /assistants/{id}/subgraphs is 405", { skip: oursOnly("LangGraph.js answers 404") }, async () => {
  const res = await raw("/assistants/chain/subgraphs", { method: "POST", json: {} });
  assert.equal(res.status, 405);
  assert.match(res.headers.get("allow") ?? "", /GET/);
});

// Two levels: outer -> mid / mid2 (both `mid`) -> inner (`leaf`) / other (`leaf2`).
const DEEP_LUA = `
local sst = superstep or require("superstep")
local function graph(fields, nodes)
  local g = sst.StateGraph(fields)
  local prev = sst.START
  for _, n in ipairs(nodes) do
    g:add_node(n[1], n[2])
    g:add_edge(prev, n[1])
    prev = n[1]
  end
  g:add_edge(prev, sst.END)
  return g:compile()
end
local r = sst.reducers.replace
local leaf = graph({ x = r }, { { "work", function() return { x = 1 } end } })
local leaf2 = graph({ w = r }, { { "work", function() return { w = 1 } end } })
local mid = graph({ x = r, y = r }, { { "inner", leaf }, { "other", leaf2 } })
return graph({ x = r, y = r, z = r },
  { { "mid", mid }, { "plain", function() return {} end }, { "mid2", mid } })
`;

describe("two levels of subgraphs (a server of this file's own)", { skip: skipOwn }, () => {
  let dir;
  let server;
  let c;
  // GET on this server: {status, json}.
  const get = async (p) => {
    const res = await fetch(server.url + p);
    return { status: res.status, json: await res.json() };
  };
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sst-subgraphs-test-"));
    fs.writeFileSync(path.join(dir, "deep.lua"), DEEP_LUA);
    fs.writeFileSync(path.join(dir, "langgraph.json"), JSON.stringify({ graphs: { deep: "./deep.lua" } }));
    server = await startServer({
      superstep: SUPERSTEP, config: path.join(dir, "langgraph.json"),
      args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(dir, "s.db"), "--workers", "1"],
    });
    c = makeClient({ apiUrl: server.url });
  });
  after(async () => {
    if (server) {
      const res = await server.stop(10000);
      assert.equal(res.timedOut, false, "the server exits within 10 s of SIGTERM");
      assert.equal(res.code, 0, `exit code after SIGTERM: ${res.code}\n${server.stderr()}`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  const MID = schemas("deep", "x", "y");
  const LEAF = schemas("deep", "x");
  const LEAF2 = schemas("deep", "w");
  const ALL = {
    mid: MID, "mid|inner": LEAF, "mid|other": LEAF2,
    mid2: MID, "mid2|inner": LEAF, "mid2|other": LEAF2,
  };

  test("without recurse: the direct children, in the order the nodes were added", async () => {
    const s = await c.assistants.getSubgraphs("deep");
    assert.equal(JSON.stringify(s), JSON.stringify({ mid: MID, mid2: MID }));
    assert.deepEqual(await c.assistants.getSubgraphs("deep", { recurse: false }), s);
  });

  test("recurse: every level, each subgraph followed by its own (\"parent|child\")", async () => {
    const s = await c.assistants.getSubgraphs("deep", { recurse: true });
    assert.equal(JSON.stringify(s), JSON.stringify(ALL));
    assert.deepEqual(await c.assistants.getSubgraphs(uuid5("deep"), { recurse: true }), s, "by assistant uuid");
  });

  test("recurse as LangGraph.js reads it: true, 1 or yes in any case", async () => {
    for (const v of ["true", "TRUE", "1", "yes", "Yes"]) {
      const res = await get(`/assistants/deep/subgraphs?recurse=${v}`);
      assert.equal(res.status, 200, v);
      assert.deepEqual(Object.keys(res.json), Object.keys(ALL), `recurse=${v}`);
    }
    for (const v of ["false", "0", "no", "", "t"]) {
      const res = await get(`/assistants/deep/subgraphs?recurse=${v}`);
      assert.equal(res.status, 200, v);
      assert.deepEqual(Object.keys(res.json), ["mid", "mid2"], `recurse=${v}`);
    }
  });

  test("namespace: one subgraph; a nested one (\"mid|inner\") needs recurse", async () => {
    assert.deepEqual(await c.assistants.getSubgraphs("deep", { namespace: "mid" }), { mid: MID });
    // With recurse, a namespace still gives only the subgraph it names.
    assert.deepEqual(await c.assistants.getSubgraphs("deep", { namespace: "mid2", recurse: true }), { mid2: MID });
    assert.deepEqual(await c.assistants.getSubgraphs("deep", { namespace: "mid|inner" }), {});
    assert.deepEqual(await c.assistants.getSubgraphs("deep", { namespace: "mid|inner", recurse: true }),
      { "mid|inner": LEAF });
    assert.deepEqual(await c.assistants.getSubgraphs("deep", { namespace: "mid2|other", recurse: true }),
      { "mid2|other": LEAF2 });
    // The "|" encoded or not in the path.
    for (const p of ["mid%7Cother", "mid|other"]) {
      const res = await get(`/assistants/deep/subgraphs/${p}?recurse=true`);
      assert.equal(res.status, 200, p);
      assert.deepEqual(res.json, { "mid|other": LEAF2 }, p);
    }
  });

  test("namespace naming no subgraph: {}", async () => {
    for (const namespace of ["plain", "mi", "mid|nope", "mid|inner|work", "mid|", "|mid", "nope|inner"]) {
      assert.deepEqual(await c.assistants.getSubgraphs("deep", { namespace, recurse: true }), {}, namespace);
    }
  });
});
