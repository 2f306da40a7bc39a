// A small scripted MCP stdio server for the cases the reference server
// cannot show (tests/unit/test_mcp.c). Newline-delimited JSON-RPC on
// stdin/stdout, like any stdio server. Options:
//   --version V   the protocolVersion it answers initialize with (2025-06-18)
//   --no-tools    no "tools" capability
//   --garbage     writes lines that are not JSON-RPC before its first reply
// Its tools (tools/list comes in two pages, "p2" is the cursor of the second):
//   echo {text}  -> "echo: TEXT"          add {a, b} -> a + b as text
//   noschema      has no inputSchema;      loose has {"properties": ...} without "type"
//   ask           sends the client a ping and a sampling request, and returns
//                 {ping: <its answer>, sampling: <its answer>} as structuredContent
//   grow          adds the tool "extra" and sends notifications/tools/list_changed
//   garbage       writes a line that is not JSON, then answers "after garbage"
//   lists         how many tools/list requests it has had (text)
//   cwd           its working directory (text)
//   fail          answers isError with the text "it broke"
//   mixed         a text block and an image block
//   slow {ms}     answers "slept" after ms, unless a notifications/cancelled for it
//                 comes first
//   cancels       the reasons of the cancellations it got, joined with ","; one that
//                 came after its call was answered has " (after the reply)" added
//   die           writes "fake: dying" to stderr and exits with status 5
import readline from "node:readline";

const args = process.argv.slice(2);
const version = args.includes("--version") ? args[args.indexOf("--version") + 1] : "2025-06-18";
const noTools = args.includes("--no-tools");
let garbageFirst = args.includes("--garbage");

const send = (m) => process.stdout.write(JSON.stringify(m) + "\n");
const text = (t) => ({ content: [{ type: "text", text: t }] });
const obj = (props) => ({ type: "object", properties: props });

const tools = [
  { name: "echo", description: "Echoes.", inputSchema: obj({ text: { type: "string" } }) },
  { name: "add", description: "Adds.", inputSchema: obj({ a: { type: "number" }, b: { type: "number" } }) },
  { name: "noschema", description: "No schema." },
  { name: "loose", description: "Loose schema.", inputSchema: { properties: { x: { type: "string" } } } },
  { name: "ask", inputSchema: obj({}) },
  { name: "grow", inputSchema: obj({}) },
  { name: "garbage", inputSchema: obj({}) },
  { name: "lists", inputSchema: obj({}) },
  { name: "cwd", inputSchema: obj({}) },
  { name: "fail", inputSchema: obj({}) },
  { name: "mixed", inputSchema: obj({}) },
  { name: "slow", inputSchema: obj({ ms: { type: "number" } }) },
  { name: "cancels", inputSchema: obj({}) },
  { name: "die", inputSchema: obj({}) },
];
let lists = 0;
const cancels = [];
const waiting = new Map(); // id of our request to the client -> resolve
let nextId = 0;
const ask = (method, params) =>
  new Promise((resolve) => {
    const id = `srv-${++nextId}`;
    waiting.set(id, resolve);
    send({ jsonrpc: "2.0", id, method, params });
  });

async function call(name, a) {
  switch (name) {
    case "echo": return text(`echo: ${a.text}`);
    case "add": return text(String(a.a + a.b));
    case "ask": {
      const ping = await ask("ping", {});
      const sampling = await ask("sampling/createMessage", { messages: [], maxTokens: 1 });
      return { content: [], structuredContent: { ping, sampling } };
    }
    case "grow":
      tools.push({ name: "extra", description: "Added later.", inputSchema: obj({}) });
      send({ jsonrpc: "2.0", method: "notifications/tools/list_changed" });
      return text("grown");
    case "garbage":
      process.stdout.write("this line is not JSON\n");
      return text("after garbage");
    case "lists": return text(String(lists));
    case "cwd": return text(process.cwd());
    case "fail": return { content: [{ type: "text", text: "it broke" }], isError: true };
    case "mixed":
      return { content: [{ type: "text", text: "a picture:" }, { type: "image", data: "aGk=", mimeType: "image/png" }] };
    case "cancels": return text(cancels.join(","));
    case "die":
      process.stderr.write("fake: dying\n", () => process.exit(5));
      return new Promise(() => {});
    default: return { content: [{ type: "text", text: `no tool ${name}` }], isError: true };
  }
}

const slow = new Map(); // request id -> timer
readline.createInterface({ input: process.stdin }).on("line", async (line) => {
  if (!line.trim()) return;
  const m = JSON.parse(line);
  if (garbageFirst) {
    garbageFirst = false;
    process.stdout.write("Hello, this is not JSON-RPC\n");
    process.stdout.write('{"neither": "is this"}\n');
  }
  if (m.id !== undefined && m.method === undefined) { // a reply to our request
    const resolve = waiting.get(m.id);
    waiting.delete(m.id);
    if (resolve) resolve(m.result !== undefined ? { result: m.result } : { error: m.error });
    return;
  }
  switch (m.method) {
    case "initialize":
      send({ jsonrpc: "2.0", id: m.id, result: {
        protocolVersion: version,
        capabilities: noTools ? {} : { tools: { listChanged: true } },
        serverInfo: { name: "fake", version: "0.1" } } });
      return;
    case "tools/list": {
      lists++;
      const cursor = m.params?.cursor;
      const half = Math.ceil(tools.length / 2);
      send({ jsonrpc: "2.0", id: m.id, result: cursor === "p2"
        ? { tools: tools.slice(half) } : { tools: tools.slice(0, half), nextCursor: "p2" } });
      return;
    }
    case "tools/call": {
      if (m.params.name === "slow") {
        slow.set(m.id, setTimeout(() => { slow.delete(m.id); send({ jsonrpc: "2.0", id: m.id, result: text("slept") }); }, m.params.arguments.ms));
        return;
      }
      send({ jsonrpc: "2.0", id: m.id, result: await call(m.params.name, m.params.arguments || {}) });
      return;
    }
    case "notifications/cancelled": {
      const t = slow.get(m.params.requestId);
      if (t) { clearTimeout(t); slow.delete(m.params.requestId); }
      cancels.push(t ? m.params.reason : `${m.params.reason} (after the reply)`);
      return;
    }
    default:
      if (m.id !== undefined) send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: `Method not found: ${m.method}` } });
  }
});
