// The reference server's Streamable HTTP transport, as test_mcp.c runs it:
// on 127.0.0.1 (never another interface) and a port the system picks. The
// port is written to the file named by $SST_MCP_PORT_FILE once the server
// listens, and the server exits when its stdin ends (the test died or is
// done), so no server outlives its test.
//
//   SST_MCP_PORT_FILE=/tmp/port node tests/mcp/http_server.mjs
import fs from "node:fs";
import net from "node:net";

const portFile = process.env.SST_MCP_PORT_FILE;
if (!portFile) {
  console.error("http_server.mjs: set SST_MCP_PORT_FILE");
  process.exit(2);
}

// The server calls app.listen(PORT, cb) with PORT from the environment; the port is
// asked of the system (0) and the address pinned to the loopback interface.
process.env.PORT = "0";
const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  if (typeof args[0] === "number" || typeof args[0] === "string") {
    const cbs = args.slice(1).filter((a) => typeof a === "function");
    this.once("listening", () => {
      const tmp = `${portFile}.tmp`;
      fs.writeFileSync(tmp, String(this.address().port));
      fs.renameSync(tmp, portFile);
    });
    return listen.call(this, { port: Number(args[0]), host: "127.0.0.1" }, ...cbs);
  }
  return listen.apply(this, args);
};

process.stdin.on("data", () => {});
process.stdin.on("end", () => process.exit(0));
process.stdin.on("error", () => process.exit(0));

process.argv.splice(2, process.argv.length, "streamableHttp");
await import(
  new URL("./node_modules/@modelcontextprotocol/server-everything/dist/index.js", import.meta.url)
);
