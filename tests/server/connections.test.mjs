// --max-connections: a connection past the limit is answered 503 at once and
// closed (not left waiting in the listen backlog until the client gives up),
// and a connection is served again once one of the open ones closes. Raw TCP
// sockets, so the test holds connections open exactly as it means to. Starts a
// server of its own (SST_SUPERSTEP, set by run.mjs --superstep).
import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startServer } from "./_server.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SUPERSTEP = process.env.SST_SUPERSTEP;
const skip = SUPERSTEP ? false : "needs SST_SUPERSTEP (run.mjs --superstep PATH): it starts a server of its own";
const LIMIT = 3;

// A connected socket and everything it receives; `closed` settles when the server ends it.
function connect(url) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname);
    const c = { socket: s, data: "" };
    c.closed = new Promise((res) => s.on("close", () => res(c.data)));
    s.on("data", (b) => { c.data += b.toString("latin1"); c.onData?.(); });
    s.once("connect", () => resolve(c));
    s.once("error", reject);
  });
}

// One GET on a kept-alive connection: resolves with the whole response text.
function get(c, p) {
  c.data = "";
  return new Promise((resolve) => {
    c.onData = () => {
      const end = c.data.indexOf("\r\n\r\n");
      const len = /content-length: *(\d+)/i.exec(c.data);
      if (end >= 0 && len && c.data.length >= end + 4 + Number(len[1])) {
        c.onData = null;
        resolve(c.data);
      }
    };
    c.socket.write(`GET ${p} HTTP/1.1\r\nHost: x\r\n\r\n`);
  });
}

describe(`--max-connections ${LIMIT}`, { skip, timeout: 30000 }, () => {
  let server, dir;
  const held = [];
  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "sst-conn-test-"));
    server = await startServer({
      superstep: SUPERSTEP, config: path.join(HERE, "langgraph.json"),
      args: ["--host", "127.0.0.1", "--port", "0", "--db", path.join(dir, "c.db"), "--workers", "1",
        "--max-connections", String(LIMIT)],
    });
  });
  after(async () => {
    for (const c of held) c.socket.destroy();
    if (server) {
      const res = await server.stop(10000);
      assert.equal(res.code, 0, `exit code after SIGTERM: ${res.code}\n${server.stderr()}`);
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });

  test("past the limit: 503 with a JSON detail and the connection closed; a slot freed is served again", async () => {
    // The limit's worth of connections, each answered once, held open (keep-alive).
    for (let i = 0; i < LIMIT; i++) {
      const c = await connect(server.url);
      held.push(c);
      assert.match(await get(c, "/ok"), /^HTTP\/1\.1 200 /, `connection ${i + 1} is served`);
    }
    // Two more: each is answered 503 and closed by the server, with or without a request.
    const asking = await connect(server.url);
    asking.socket.write("GET /ok HTTP/1.1\r\nHost: x\r\n\r\n");
    const silent = await connect(server.url);
    for (const [what, c] of [["a request", asking], ["no request", silent]]) {
      const text = await c.closed;
      assert.match(text, /^HTTP\/1\.1 503 /, `past the limit, ${what}: ${JSON.stringify(text)}`);
      assert.match(text, /\r\nconnection: close\r\n/i);
      const body = JSON.parse(text.slice(text.indexOf("\r\n\r\n") + 4));
      assert.match(body.detail, /max-connections/);
    }
    // The held ones are still served.
    assert.match(await get(held[0], "/ok"), /^HTTP\/1\.1 200 /, "a held connection still works");
    // One closes: a new connection is served once the server has seen it go (polled).
    const gone = held.shift();
    gone.socket.end();
    await gone.closed;
    for (let attempt = 0; ; attempt++) {
      const c = await connect(server.url);
      const ans = await Promise.race([get(c, "/ok"), c.closed]);
      if (/^HTTP\/1\.1 200 /.test(ans)) {
        held.push(c);
        break;
      }
      assert.match(ans, /^HTTP\/1\.1 503 /, "refused connections are answered 503");
      assert.ok(attempt < 200, "a freed slot is given to a new connection");
      await new Promise((r) => setTimeout(r, 20));
    }
  });
});
