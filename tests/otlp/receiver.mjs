// SPDX-License-Identifier: MIT
// An OTLP/HTTP JSON trace receiver for tests/unit/test_otlp.c, on 127.0.0.1.
//
// Each POST /v1/traces is decoded with OpenTelemetry's own protobuf
// definitions: the static protobufjs module that @opentelemetry/otlp-transformer
// generates from opentelemetry-proto (package.json pins the version; run
// `npm ci --prefix tests/otlp`). The body goes through the OTLP JSON mapping
// (traceId/spanId/parentSpanId as hex, which the OTLP specification puts in
// place of protobuf's base64), then ExportTraceServiceRequest.fromObject,
// .verify, binary .encode and .decode, and back with .toObject (int64 as
// decimal strings, enums as numbers). What comes back must equal what was
// sent, up to proto3 defaults: a misspelt or unknown field, a value of the
// wrong JSON type, an enum sent as a name, an int64 sent as a JSON number or
// an id of the wrong length is refused (HTTP 400) and listed in "errors".
//
// Accepted spans are kept as OpenTelemetry's definitions read them back, and
// served by GET /state. The receiver can be told to answer with other
// statuses, a Retry-After, a partial success, or slowly (POST /control).
//
//   GET  /state[?spans=0]  {"requests":[...],"spans":[...],"errors":[...]}
//   POST /control          {"answers":[{"status":503,"retryAfter":1,"body":{...}}...],
//                           "delayMs":N}  (answers are used in turn, then 200)
//   POST /reset            forgets everything, answers and delay included
//
// It prints its port on stdout, and exits when its stdin closes (the test
// that started it is gone) or after 15 minutes, whichever is first.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
let root;
try {
  root = require('@opentelemetry/otlp-transformer/build/src/generated/root.js');
} catch (e) {
  process.stderr.write(`receiver.mjs: OpenTelemetry's packages are missing (${e.message}); ` +
                       `run: npm ci --prefix tests/otlp\n`);
  process.exit(2);
}
const Request = root.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
const toObjectOpts = { longs: String, enums: Number, bytes: String };
const MAX_BODY = 20 << 20; // OTLP: the recommended request size limit

let requests = [];
let spans = [];
let errors = [];
let answers = [];
let delayMs = 0;
let generation = 0; // bumped by /reset: a request delayed across it is not kept

// The fields whose bytes OTLP/JSON writes as hex, and the length each must have.
const ID_BYTES = { traceId: 16, spanId: 8, parentSpanId: 8 };

// A copy of @p v with its ids turned from hex into protobuf JSON's base64;
// throws naming the path of an id that is not hex of the right length.
function hexIdsToBase64(v, path) {
  if (Array.isArray(v)) {
    return v.map((x, i) => hexIdsToBase64(x, `${path}[${i}]`));
  }
  if (v === null || typeof v !== 'object') {
    return v;
  }
  const out = {};
  for (const [k, x] of Object.entries(v)) {
    if (k in ID_BYTES) {
      const n = ID_BYTES[k];
      const empty = k === 'parentSpanId' && x === '';
      if (typeof x !== 'string' || (!empty && !new RegExp(`^[0-9a-fA-F]{${2 * n}}$`).test(x))) {
        throw new Error(`${path}.${k}: ${JSON.stringify(x)} is not ${2 * n} hex digits`);
      }
      if (!empty && /^0+$/.test(x)) {
        throw new Error(`${path}.${k}: an all-zero id is invalid`);
      }
      out[k] = Buffer.from(x, 'hex').toString('base64');
    } else {
      out[k] = hexIdsToBase64(x, `${path}.${k}`);
    }
  }
  return out;
}

function base64ToHex(s) {
  return typeof s === 'string' ? Buffer.from(s, 'base64').toString('hex') : s;
}

// proto3 leaves out fields at their default: absent equals these.
function isDefault(v) {
  return v === 0 || v === '' || v === false || v === '0' ||
         (Array.isArray(v) && v.length === 0);
}

// The first difference between what was sent (@p a) and what OpenTelemetry's
// definitions read back (@p b), as a message, or null.
function diff(a, b, path) {
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) {
      return `${path}: sent ${JSON.stringify(a)}, read back ${JSON.stringify(b)}`;
    }
    for (let i = 0; i < a.length; i++) {
      const d = diff(a[i], b[i], `${path}[${i}]`);
      if (d) {
        return d;
      }
    }
    return null;
  }
  if (a !== null && typeof a === 'object' && b !== null && typeof b === 'object') {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!(k in b) && isDefault(a[k])) {
        continue;
      }
      if (!(k in b)) {
        return `${path}.${k}: sent ${JSON.stringify(a[k])}, which OpenTelemetry's definitions ` +
               `do not read (an unknown field, or a value of the wrong type)`;
      }
      if (!(k in a)) {
        return `${path}.${k}: read back ${JSON.stringify(b[k])}, which was not sent`;
      }
      const d = diff(a[k], b[k], `${path}.${k}`);
      if (d) {
        return d;
      }
    }
    return null;
  }
  if (a !== b) {
    return `${path}: sent ${JSON.stringify(a)} (${typeof a}), OpenTelemetry's definitions read ` +
           `${JSON.stringify(b)} (${typeof b})`;
  }
  return null;
}

// An ExportTraceServiceRequest as OpenTelemetry's definitions read it; throws why not.
function decode(text) {
  let sent;
  try {
    sent = JSON.parse(text);
  } catch (e) {
    throw new Error(`not JSON: ${e.message}`);
  }
  const mapped = hexIdsToBase64(sent, '');
  const msg = Request.fromObject(mapped);
  const bad = Request.verify(msg);
  if (bad) {
    throw new Error(`ExportTraceServiceRequest.verify: ${bad}`);
  }
  const back = Request.toObject(Request.decode(Request.encode(msg).finish()), toObjectOpts);
  const d = diff(mapped, back, '');
  if (d) {
    throw new Error(d);
  }
  return back;
}

function attrs(list) {
  const out = {};
  for (const kv of list || []) {
    out[kv.key] = kv.value;
  }
  return out;
}

// The spans of a decoded request, flattened, ids back in hex.
function flatten(req) {
  const out = [];
  for (const rs of req.resourceSpans || []) {
    const resource = attrs(rs.resource && rs.resource.attributes);
    for (const ss of rs.scopeSpans || []) {
      for (const s of ss.spans || []) {
        out.push({
          resource,
          scope: ss.scope || {},
          traceId: base64ToHex(s.traceId),
          spanId: base64ToHex(s.spanId),
          parentSpanId: base64ToHex(s.parentSpanId || ''),
          name: s.name,
          kind: s.kind,
          startTimeUnixNano: s.startTimeUnixNano,
          endTimeUnixNano: s.endTimeUnixNano,
          attributes: attrs(s.attributes),
          droppedAttributesCount: s.droppedAttributesCount || 0,
          events: (s.events || []).map((e) => ({
            name: e.name,
            timeUnixNano: e.timeUnixNano,
            attributes: attrs(e.attributes),
          })),
          droppedEventsCount: s.droppedEventsCount || 0,
          status: s.status || {},
        });
      }
    }
  }
  return out;
}

function reply(res, status, obj, extra = {}) {
  const body = JSON.stringify(obj);
  res.writeHead(status, { 'Content-Type': 'application/json', ...extra });
  res.end(body);
}

function readBody(req) {
  return new Promise((resolve, reject) => {
    const chunks = [];
    let size = 0;
    req.on('data', (c) => {
      size += c.length;
      if (size <= MAX_BODY) {
        chunks.push(c);
      }
    });
    req.on('end', () => resolve(size > MAX_BODY ? null : Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

async function onExport(req, res) {
  const at = Date.now();
  const body = await readBody(req);
  const headers = { ...req.headers };
  const entry = { at, status: 0, spans: 0, bytes: body === null ? -1 : body.length, headers };
  requests.push(entry);
  const gen = generation;
  if (delayMs > 0) {
    await new Promise((r) => setTimeout(r, delayMs));
  }
  if (gen !== generation || res.destroyed || req.socket.destroyed) {
    entry.status = -1; // the client gave up, or the test moved on: nothing is kept
    return res.destroyed ? undefined : reply(res, 503, { message: 'reset' });
  }
  if (body === null) {
    entry.status = 413;
    errors.push(`request ${requests.length}: larger than ${MAX_BODY} bytes`);
    return reply(res, 413, { message: 'too large' });
  }
  if (!/^application\/json(;|$)/.test(req.headers['content-type'] || '')) {
    entry.status = 415;
    errors.push(`request ${requests.length}: Content-Type ${req.headers['content-type']}`);
    return reply(res, 415, { message: 'expected application/json' });
  }
  let decoded;
  try {
    decoded = decode(body);
  } catch (e) {
    entry.status = 400;
    errors.push(`request ${requests.length}: ${e.message}`);
    return reply(res, 400, { message: e.message });
  }
  const got = flatten(decoded);
  entry.spans = got.length;
  const a = answers.shift() || { status: 200 };
  entry.status = a.status;
  const extra = a.retryAfter !== undefined ? { 'Retry-After': String(a.retryAfter) } : {};
  if (a.status >= 200 && a.status < 300) {
    spans.push(...got);
  }
  return reply(res, a.status, a.body || {}, extra);
}

const server = createServer(async (req, res) => {
  try {
    const url = new URL(req.url, 'http://127.0.0.1');
    if (req.method === 'POST' && url.pathname === '/v1/traces') {
      return await onExport(req, res);
    }
    if (req.method === 'GET' && url.pathname === '/state') {
      const withSpans = url.searchParams.get('spans') !== '0';
      return reply(res, 200, { requests, spans: withSpans ? spans : [], nspans: spans.length,
                               errors });
    }
    if (req.method === 'POST' && url.pathname === '/control') {
      const c = JSON.parse((await readBody(req)) || '{}');
      answers = Array.isArray(c.answers) ? c.answers : answers;
      delayMs = typeof c.delayMs === 'number' ? c.delayMs : delayMs;
      return reply(res, 200, {});
    }
    if (req.method === 'POST' && url.pathname === '/reset') {
      await readBody(req);
      requests = [];
      spans = [];
      errors = [];
      answers = [];
      delayMs = 0;
      generation++;
      return reply(res, 200, {});
    }
    return reply(res, 404, { message: `no ${req.method} ${url.pathname}` });
  } catch (e) {
    errors.push(`receiver: ${e.stack}`);
    return reply(res, 500, { message: String(e) });
  }
});

server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${server.address().port}\n`);
});
process.stdin.on('end', () => process.exit(0));
process.stdin.on('error', () => process.exit(0));
process.stdin.resume();
setTimeout(() => process.exit(0), 15 * 60 * 1000).unref();
