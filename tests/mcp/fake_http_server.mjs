// A small scripted MCP Streamable HTTP server (node:http only) for what the
// reference server does not do (tests/unit/test_mcp.c): replies as plain
// application/json, a server request inside a reply's event stream, header
// checks, an expired session. Listens on 127.0.0.1, on a port the system
// picks, written to $SST_MCP_PORT_FILE; exits when its stdin ends.
//
// Every request after initialize must carry the session id it gave and
// "MCP-Protocol-Version: 2025-06-18" (else HTTP 400). Tools:
//   echo {text}  an event stream: a log notification, then "echo: TEXT"
//   ping_first   an event stream: a ping request to the client, and once the
//                client's answer has been POSTed, "pong: <the answer's result>"
//   headers      JSON: what the request carried {authorization, version, session,
//                traceparent when one was sent}
//   deletes      how many sessions the client ended with DELETE (text)
//   expire       forgets the session: its next request gets HTTP 404
//   linger       an event stream with the result, kept open for 30 s after it
//   linger_end   how the last linger stream ended: "open" (not yet), "closed by the
//                client" or "ended by the server after 30 s"
import fs from "node:fs";
import http from "node:http";

const portFile = process.env.SST_MCP_PORT_FILE;
const sessions = new Set();
let deletes = 0, nextSession = 0;
const waiting = new Map(); // id of a request to the client -> resolve(its answer)

let lingerEnd = "open";
const tools = ["echo", "ping_first", "headers", "deletes", "expire", "linger", "linger_end"].map((name) => ({
  name, description: `The ${name} tool.`, inputSchema: { type: "object", properties: {} },
}));
const text = (t) => ({ content: [{ type: "text", text: t }] });

function json(res, status, body, headers = {}) {
  res.writeHead(status, { "Content-Type": "application/json", ...headers });
  res.end(body === undefined ? "" : JSON.stringify(body));
}

function stream(res) {
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
  res.write(": a comment line\n\nid: 0\ndata:\n\n"); // a primer event without data
  return (m) => res.write(`event: message\ndata: ${JSON.stringify(m)}\n\n`);
}

async function toolCall(m, req, res) {
  const reply = (result) => ({ jsonrpc: "2.0", id: m.id, result });
  switch (m.params.name) {
    case "echo": {
      const send = stream(res);
      send({ jsonrpc: "2.0", method: "notifications/message", params: { level: "info", data: "hello" } });
      send(reply(text(`echo: ${m.params.arguments.text}`)));
      return res.end();
    }
    case "ping_first": {
      const send = stream(res);
      const answer = new Promise((resolve) => waiting.set("srv-ping", resolve));
      send({ jsonrpc: "2.0", id: "srv-ping", method: "ping" });
      const got = await Promise.race([answer, new Promise((r) => setTimeout(() => r(null), 5000))]);
      send(reply(text(`pong: ${got === null ? "none" : JSON.stringify(got.result)}`)));
      return res.end();
    }
    case "linger": {
      const send = stream(res);
      send(reply(text("lingered")));
      lingerEnd = "open";
      const t = setTimeout(() => { lingerEnd = "ended by the server after 30 s"; res.end(); }, 30000);
      res.on("close", () => {
        clearTimeout(t);
        if (lingerEnd === "open") lingerEnd = "closed by the client";
      });
      return;
    }
    case "linger_end": return json(res, 200, reply(text(lingerEnd)));
    case "headers":
      return json(res, 200, reply(text(JSON.stringify({
        authorization: req.headers["authorization"] ?? null,
        version: req.headers["mcp-protocol-version"] ?? null,
        session: req.headers["mcp-session-id"] ?? null,
        ...(req.headers["traceparent"] ? { traceparent: req.headers["traceparent"] } : {}),
      }))));
    case "deletes": return json(res, 200, reply(text(String(deletes))));
    case "expire":
      sessions.delete(req.headers["mcp-session-id"]);
      return json(res, 200, reply(text("expired")));
    default:
      return json(res, 200, reply({ ...text(`no tool ${m.params.name}`), isError: true }));
  }
}

const server = http.createServer((req, res) => {
  let body = "";
  req.on("data", (d) => (body += d));
  req.on("end", async () => {
    const sid = req.headers["mcp-session-id"];
    if (req.method === "DELETE") {
      if (sessions.delete(sid)) deletes++;
      return json(res, 200);
    }
    if (req.method !== "POST") return json(res, 405);
    const m = JSON.parse(body);
    if (m.method === "initialize") {
      const id = `sess-${++nextSession}`;
      sessions.add(id);
      return json(res, 200, { jsonrpc: "2.0", id: m.id, result: {
        protocolVersion: "2025-06-18", capabilities: { tools: {} },
        serverInfo: { name: "fake-http", version: "0.1" } } }, { "Mcp-Session-Id": id });
    }
    if (!sid) return json(res, 400, { jsonrpc: "2.0", id: null, error: { code: -32000, message: "no session id" } });
    if (!sessions.has(sid)) return json(res, 404, { jsonrpc: "2.0", id: null, error: { code: -32001, message: "Session not found" } });
    if (req.headers["mcp-protocol-version"] !== "2025-06-18") return json(res, 400, { error: "no MCP-Protocol-Version" });
    if (m.method === undefined) { // an answer to our request
      waiting.get(m.id)?.(m);
      waiting.delete(m.id);
      return json(res, 202);
    }
    if (m.id === undefined) return json(res, 202); // a notification
    if (m.method === "tools/list") return json(res, 200, { jsonrpc: "2.0", id: m.id, result: { tools } });
    if (m.method === "tools/call") return toolCall(m, req, res);
    return json(res, 200, { jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  });
});
server.listen({ port: 0, host: "127.0.0.1" }, () => {
  fs.writeFileSync(`${portFile}.tmp`, String(server.address().port));
  fs.renameSync(`${portFile}.tmp`, portFile);
});
process.stdin.on("data", () => {});
process.stdin.on("end", () => process.exit(0));
