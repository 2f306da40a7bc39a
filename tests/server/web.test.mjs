// The web page's files and the graph as SVG (superstep only: docs/web.md). The
// page itself is driven in a real browser by tests/web; here, the HTTP side:
// every file of src/server/web/ served byte for byte from the copy built into
// the binary, their headers, names that must not resolve, and the SVG.
import { test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ASSISTANT, oursOnly, raw } from "./_lib.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const WEB = path.join(HERE, "..", "..", "src", "server", "web");
const skip = oursOnly("LangGraph.js's server has no page and no graph.svg");

const pageFiles = () => fs.readdirSync(WEB).filter((f) => !f.startsWith(".")).sort();

test("every file of src/server/web is served at /ui/<name>, as it is in the tree", { skip }, async () => {
  const files = pageFiles();
  assert.ok(files.includes("index.html"), `src/server/web has index.html: ${files}`);
  const types = { ".html": /^text\/html/, ".css": /^text\/css/, ".js": /^text\/javascript/, ".svg": /^image\/svg\+xml/ };
  for (const f of files) {
    const res = await fetch(`${process.env.SST_URL}/ui/${f}`);
    assert.equal(res.status, 200, `/ui/${f}`);
    const body = Buffer.from(await res.arrayBuffer());
    assert.ok(body.equals(fs.readFileSync(path.join(WEB, f))), `/ui/${f}: the bytes of src/server/web/${f} (rebuild after changing the page)`);
    const want = types[path.extname(f)];
    if (want) assert.match(res.headers.get("content-type"), want, `/ui/${f}: content type`);
    assert.equal(res.headers.get("x-content-type-options"), "nosniff");
    assert.equal(res.headers.get("cache-control"), "no-cache");
  }
});

test("GET / is index.html, with a policy that runs only the page's own scripts", { skip }, async () => {
  const res = await raw("/");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type"), /^text\/html; charset=utf-8/);
  assert.equal(res.text, fs.readFileSync(path.join(WEB, "index.html"), "utf8"));
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/, `no inline or eval'd scripts: ${csp}`);
  assert.match(csp, /connect-src 'self'/);
  assert.match(csp, /frame-ancestors 'none'/);
});

test("names that are not the page's files: 404, never a file elsewhere", { skip }, async () => {
  for (const p of ["/ui/missing.js", "/ui/.hidden", "/ui/", "/ui/%2e%2e%2fCMakeLists.txt", "/ui/..%2f..%2fREADME.md", "/index.html"]) {
    const res = await raw(p);
    assert.equal(res.status, 404, `${p}: ${res.status} ${res.text.slice(0, 80)}`);
    assert.equal(typeof res.json?.detail, "string", `${p}: a JSON problem`);
  }
  const post = await raw("/", { method: "POST", json: {} });
  assert.equal(post.status, 405, "POST / is 405");
});

test("GET /assistants/{id}/graph.svg: the graph laid out by Graphviz, one <g class=node> per node", { skip }, async () => {
  for (const id of ["chain", ASSISTANT.chain]) {
    const res = await raw(`/assistants/${id}/graph.svg`);
    assert.equal(res.status, 200, `${id}: ${res.text.slice(0, 200)}`);
    assert.match(res.headers.get("content-type"), /^image\/svg\+xml/);
    assert.match(res.text, /<svg [^>]*viewBox=/);
    const titles = [...res.text.matchAll(/<g id="node\d+" class="node">\s*<title>([^<]*)<\/title>/g)].map((m) => m[1]).sort();
    assert.deepEqual(titles, ["__end__", "__start__", "a", "b", "c"], `${id}: the chain's nodes`);
    assert.equal([...res.text.matchAll(/class="edge"/g)].length, 4, `${id}: the chain's edges`);
  }
});

test("graph.svg ?xray draws a subgraph's nodes; unknown assistants are 404", { skip }, async () => {
  const plain = await raw("/assistants/nested/graph.svg");
  const xray = await raw("/assistants/nested/graph.svg?xray=true");
  assert.equal(plain.status, 200);
  assert.equal(xray.status, 200);
  const titles = (t) => [...t.matchAll(/class="node">\s*<title>([^<]*)<\/title>/g)].map((m) => m[1]).sort();
  assert.deepEqual(titles(plain.text), ["__end__", "__start__", "child", "finish"]);
  assert.deepEqual(titles(xray.text), ["__end__", "__start__", "child:work", "finish"], "the child's node drawn");
  assert.match(xray.text, /class="cluster"/, "the subgraph drawn as a cluster");
  const missing = await raw("/assistants/00000000-0000-0000-0000-000000000000/graph.svg");
  assert.equal(missing.status, 404);
  assert.equal(typeof missing.json?.detail, "string");
});
