// superstep serve's /mcp (docs/server.md "MCP: assistants as tools") driven by the official
// MCP TypeScript client (@modelcontextprotocol/sdk, here as a dependency of the reference
// server in package.json) over Streamable HTTP: it lists the assistants as tools with their
// input schemas and calls them; a failing run is a tool error; http.disable_mcp removes it.
//
//   node tests/mcp/serve.mjs --superstep build/plain/superstep
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { parseArgs, startServer } from "../server/_server.mjs";
import { repo, runTests, tmpDir, writeConfig } from "../web/_origin.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const sdk = path.join(here, "node_modules/@modelcontextprotocol/sdk/dist/esm/client");
if (!fs.existsSync(sdk)) {
  console.error("tests/mcp/node_modules has no @modelcontextprotocol/sdk: npm ci --prefix tests/mcp");
  process.exit(1);
}
const { Client } = await import(pathToFileURL(path.join(sdk, "index.js")).href);
const { StreamableHTTPClientTransport } = await import(pathToFileURL(path.join(sdk, "streamableHttp.js")).href);

const opts = parseArgs("serve.mjs", "node tests/mcp/serve.mjs --superstep BIN [--keep]");
const tmp = tmpDir();
const servers = [];
const lsan = process.env.LSAN_OPTIONS ? {} : { LSAN_OPTIONS: `suppressions=${path.join(repo, "tests/lsan.supp")}:print_suppressions=0` };

async function serve(name, cfg, args = [], env = {}) {
  const s = await startServer({
    superstep: opts.superstep, config: writeConfig(tmp, name, cfg, ["counter", "chain", "chat"]), env: { ...lsan, ...env }, timeoutMs: 30000,
    args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--workers", "2", "--quiet", ...args],
  });
  servers.push(s);
  return s;
}
async function connect(url, headers = {}) {
  const client = new Client({ name: "superstep-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${url}/mcp`), { requestInit: { headers } }));
  return client;
}

const tests = [
  ["the MCP client lists the assistants as tools and calls them", async () => {
    const s = await serve("mcp", {});
    const client = await connect(s.url);
    assert.equal(client.getServerVersion().name, "superstep");
    const { tools } = await client.listTools();
    assert.deepEqual(tools.map((t) => t.name).sort(), ["chain", "chat", "counter"]);
    const counter = tools.find((t) => t.name === "counter");
    assert.equal(counter.inputSchema.type, "object");
    assert.deepEqual(counter.inputSchema.properties.count, { type: "integer", title: "count", description: "Reducer: sum", default: 0 });
    assert.match(counter.description, /counter/);
    const out = await client.callTool({ name: "counter", arguments: { n: 3 } });
    assert.equal(out.isError, false);
    assert.deepEqual(JSON.parse(out.content[0].text), { n: 3, count: 3 });
    const chat = await client.callTool({ name: "chat", arguments: { messages: [{ type: "human", content: "What is 2 + 40?" }] } });
    const msgs = JSON.parse(chat.content[0].text).messages;
    assert.equal(msgs.at(-1).content, "The answer is 42.");
    assert.equal(msgs.at(-1).type, "ai");
    await client.close();
  }],
  ["a failing run is a tool error; an unknown tool a protocol error; GET is 405", async () => {
    const s = servers[0];
    const client = await connect(s.url);
    // counter to 30 passes the default recursion limit of 25: GraphRecursionError.
    const bad = await client.callTool({ name: "counter", arguments: { n: 30 } });
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /GraphRecursionError/);
    await assert.rejects(client.callTool({ name: "nope", arguments: {} }), /unknown tool 'nope'/);
    const refused = await client.callTool({ name: "counter", arguments: { n: "x", count: "y" } });
    assert.equal(refused.isError, true, JSON.stringify(refused));
    await client.close();
    assert.equal((await fetch(`${s.url}/mcp`)).status, 405);
  }],
  ["with a token the client sends it; http.disable_mcp removes /mcp", async () => {
    const s = await serve("token", {}, ["--auth-token-env", "SST_MCP_TOKEN"], { SST_MCP_TOKEN: "t0k" });
    await assert.rejects(connect(s.url), /401|Unauthorized|authorization/i);
    const client = await connect(s.url, { authorization: "Bearer t0k" });
    assert.equal((await client.listTools()).tools.length, 3);
    await client.close();
    const off = await serve("off", { http: { disable_mcp: true } });
    const res = await fetch(`${off.url}/mcp`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }) });
    assert.equal(res.status, 404);
  }],
];

await runTests(tests, async () => {
  let bad = false;
  for (const s of servers) {
    const st = await s.stop(10000);
    if (st.timedOut || st.code !== 0) {
      bad = true;
      console.log(`not ok - server exit ${JSON.stringify(st)}\n${s.stderr().slice(-1500)}`);
    }
  }
  if (!opts.keep) fs.rmSync(tmp, { recursive: true, force: true });
  return bad;
});
