// Start and stop a `superstep serve` or `superstep worker` process (run.mjs, auth.test.mjs,
// the stand-alone scripts), and those scripts' command line.
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";

const LISTEN_RE = /listening on (http:\/\/\S+)/;

// Starts `superstep serve CONFIG ...args` and resolves once it printed
// `listening on http://HOST:PORT` on stdout. Rejects after timeoutMs, or when
// the process exits first, with an error that includes the server's stderr.
// Resolves to {url, port, proc, stderr(), stdout(), stop(ms)}.
// command "worker" starts `superstep worker` instead and resolves once it printed
// `working` (url null, port 0).
export function startServer({ superstep, config, args = [], env = {}, timeoutMs = 20000, command = "serve" }) {
  const argv = [command, config, ...args];
  const readyRe = command === "worker" ? /^(working)$/m : LISTEN_RE;
  const proc = spawn(superstep, argv, {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  proc.stdout.setEncoding("utf8");
  proc.stderr.setEncoding("utf8");
  proc.stderr.on("data", (d) => { err += d; });
  const exited = new Promise((resolve) => proc.on("exit", (code, signal) => resolve({ code, signal })));
  const describe = () => `${superstep} ${argv.join(" ")}`;

  const ready = new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      proc.kill("SIGKILL");
      reject(new Error(`superstep ${command} did not print "${command === "worker" ? "working" : "listening on http://..."}" within ${timeoutMs / 1000} s\n` +
        `  command: ${describe()}\n  stdout: ${out.trim() || "(empty)"}\n  stderr: ${err.trim() || "(empty)"}`));
    }, timeoutMs);
    proc.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${describe()}: ${e.message}`));
    });
    proc.stdout.on("data", (d) => {
      out += d;
      const m = readyRe.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1].replace(/\/$/, ""));
      }
    });
    exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`superstep ${command} exited (code ${code}, signal ${signal}) before it was ready\n` +
        `  command: ${describe()}\n  stdout: ${out.trim() || "(empty)"}\n  stderr: ${err.trim() || "(empty)"}`));
    });
  });

  return ready.then((printed) => {
    let url = null, port = 0;
    if (command !== "worker") {
      // A server bound to 0.0.0.0 prints that address; connect through loopback.
      const u = new URL(printed);
      if (u.hostname === "0.0.0.0" || u.hostname === "[::]") u.hostname = "127.0.0.1";
      url = u.toString().replace(/\/$/, "");
      port = Number(u.port);
    }
    return {
      url,
      port,
      proc,
      stdout: () => out,
      stderr: () => err,
      exited,
      // SIGTERM, then wait up to ms for the exit; resolves {code, signal, timedOut}.
      async stop(ms = 10000) {
        if (proc.exitCode !== null || proc.signalCode !== null) return { ...(await exited), timedOut: false };
        proc.kill("SIGTERM");
        let timer;
        const timeout = new Promise((r) => { timer = setTimeout(() => r(null), ms); });
        const res = await Promise.race([exited, timeout]);
        clearTimeout(timer);
        if (res === null) {
          proc.kill("SIGKILL");
          return { ...(await exited), timedOut: true };
        }
        return { ...res, timedOut: false };
      },
    };
  });
}

// Runs `superstep serve ...` expecting it to exit on its own (a refused
// configuration); resolves {code, signal, stdout, stderr, listening} where
// listening is true if it started listening instead (it is then killed).
export function runServerExpectingExit({ superstep, config, args = [], env = {}, timeoutMs = 10000 }) {
  return new Promise((resolve, reject) => {
    const proc = spawn(superstep, ["serve", config, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    let listening = false;
    proc.stdout.setEncoding("utf8");
    proc.stderr.setEncoding("utf8");
    proc.stdout.on("data", (d) => {
      out += d;
      if (!listening && LISTEN_RE.test(out)) {
        listening = true;
        proc.kill("SIGTERM");
      }
    });
    proc.stderr.on("data", (d) => { err += d; });
    const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
    proc.on("error", (e) => { clearTimeout(timer); reject(e); });
    proc.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout: out, stderr: err, listening });
    });
  });
}

// The command line of a stand-alone test script (crash.mjs, scale.mjs, bad_input.mjs):
// --superstep PATH (required, must exist), --keep, the numeric options named in
// @p numbers and the comma-separated lists named in @p lists (--name V into opts.name),
// over @p defaults. Exits 2 with @p usageLine on a bad one.
export function parseArgs(script, usageLine, defaults = {}, { numbers = [], lists = [] } = {}) {
  const usage = (msg) => {
    if (msg) console.error(`${script}: ${msg}`);
    console.error(`usage: ${usageLine}`);
    process.exit(2);
  };
  const opts = { keep: false, ...defaults };
  const argv = process.argv.slice(2);
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const name = a.split("=")[0];
    const key = name.slice(2);
    const val = () => {
      if (a.includes("=")) return a.slice(a.indexOf("=") + 1);
      if (i + 1 >= argv.length) usage(`${a} needs a value`);
      return argv[++i];
    };
    if (name === "--superstep") opts.superstep = path.resolve(val());
    else if (name === "--keep") opts.keep = true;
    else if (numbers.includes(key)) opts[key] = Number(val());
    else if (lists.includes(key)) opts[key] = val().split(",").map((s) => s.trim()).filter(Boolean);
    else if (name === "-h" || name === "--help") usage();
    else usage(`unknown argument ${a}`);
  }
  if (!opts.superstep) usage("give --superstep PATH");
  if (!fs.existsSync(opts.superstep)) usage(`--superstep ${opts.superstep} does not exist`);
  return opts;
}
