// The HTTP API: JSON calls with the bearer token (asked for on the first 401,
// kept in sessionStorage), and SSE streams read over fetch.

const KEY = "superstep.token";
let asking = null; // the pending token prompt, shared by every call that got a 401
let askHandler = null;

export class ApiError extends Error {
  constructor(status, detail) {
    super(detail || `HTTP ${status}`);
    this.status = status;
  }
}

export const token = () => sessionStorage.getItem(KEY);
export const setToken = (t) => (t ? sessionStorage.setItem(KEY, t) : sessionStorage.removeItem(KEY));

// fn(message) shows the sign-in form and resolves once a token was stored.
export function onAuthNeeded(fn) { askHandler = fn; }

function askToken(refused) {
  if (!asking) {
    const msg = refused ? "The server refused that token. Enter the right one." : "This server needs an access token: your own (a JWT or an API key, docs/auth.md), or the one superstep serve was given through --auth-token-env.";
    asking = Promise.resolve(askHandler ? askHandler(msg) : Promise.reject(new ApiError(401, "unauthorized")))
      .finally(() => { asking = null; });
  }
  return asking;
}

// api("POST", "/threads/search", {limit: 10}) -> parsed JSON (null for an empty body).
// opts.raw: the Response itself (for streams and SVG). Throws ApiError.
export async function api(method, path, body, opts = {}) {
  for (;;) {
    const headers = {};
    if (body !== undefined) headers["Content-Type"] = "application/json";
    if (opts.accept) headers.Accept = opts.accept;
    const t = token();
    if (t) headers.Authorization = `Bearer ${t}`;
    const res = await fetch(path, {
      method, headers, signal: opts.signal, cache: "no-store",
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (res.status === 401) {
      await askToken(Boolean(t));
      continue;
    }
    if (!res.ok) {
      let detail = "";
      try {
        const txt = await res.text();
        try { detail = JSON.parse(txt).detail || txt; } catch { detail = txt; }
      } catch { /* no body */ }
      throw new ApiError(res.status, typeof detail === "string" ? detail : JSON.stringify(detail));
    }
    if (opts.raw) return res;
    const txt = await res.text();
    return txt ? JSON.parse(txt) : null;
  }
}

// The events of an SSE response: {event, data (parsed JSON when it is), id}.
export async function* sse(res) {
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  let ev = { event: "message", data: [], id: null };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        let line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.endsWith("\r")) line = line.slice(0, -1);
        if (line === "") {
          if (ev.data.length) {
            const raw = ev.data.join("\n");
            let data;
            try { data = JSON.parse(raw); } catch { data = raw; }
            yield { event: ev.event, data, id: ev.id };
          }
          ev = { event: "message", data: [], id: null };
          continue;
        }
        if (line.startsWith(":")) continue;
        const c = line.indexOf(":");
        const field = c < 0 ? line : line.slice(0, c);
        let v = c < 0 ? "" : line.slice(c + 1);
        if (v.startsWith(" ")) v = v.slice(1);
        if (field === "event") ev.event = v;
        else if (field === "data") ev.data.push(v);
        else if (field === "id") ev.id = v;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

// ---- the calls the page makes ----------------------------------------------------------

const enc = encodeURIComponent;
export const getThread = (id) => api("GET", `/threads/${enc(id)}`);
export const searchThreads = (body) => api("POST", "/threads/search", body);
export const countThreads = (body) => api("POST", "/threads/count", body);
export const createThread = (body) => api("POST", "/threads", body);
export const history = (id, limit, before) => api("POST", `/threads/${enc(id)}/history`, before ? { limit, before } : { limit });
export const checkpointState = (id, cp) => api("GET", `/threads/${enc(id)}/state/${enc(cp)}`);
export const updateState = (id, body) => api("POST", `/threads/${enc(id)}/state`, body);
export const assistants = () => api("POST", "/assistants/search", { limit: 100 });
export const cancelRun = (id, runId) => api("POST", `/threads/${enc(id)}/runs/${enc(runId)}/cancel`);
export const runsOf = (id) => api("GET", `/threads/${enc(id)}/runs?limit=5`);
export const streamRun = (id, body, signal) => api("POST", `/threads/${enc(id)}/runs/stream`, body, { raw: true, signal, accept: "text/event-stream" });
export const joinStream = (id, runId, signal) => api("GET", `/threads/${enc(id)}/runs/${enc(runId)}/stream`, undefined, { raw: true, signal, accept: "text/event-stream" });

// ---- the graph picture -------------------------------------------------------------------

const svgCache = new Map();
const SVG_NS = "http://www.w3.org/2000/svg";
const ALLOWED = new Set(["svg", "g", "title", "desc", "polygon", "polyline", "path", "ellipse", "circle", "rect", "line", "text", "tspan", "defs", "lineargradient", "radialgradient", "stop", "clippath", "a"]);

// GET /assistants/{graph}/graph.svg, parsed and sanitized: only drawing
// elements stay (no script, foreignObject, animation), and no on* handler,
// href or style with url(). Resolves to an <svg> element to clone, or null.
export function graphSvg(graphId) {
  if (!svgCache.has(graphId)) {
    const p = api("GET", `/assistants/${enc(graphId)}/graph.svg`, undefined, { raw: true, accept: "image/svg+xml" })
      .then((r) => r.text())
      .then((txt) => sanitizeSvg(txt))
      .catch((e) => { svgCache.delete(graphId); if (e.status === 404) return null; throw e; });
    svgCache.set(graphId, p);
  }
  return svgCache.get(graphId);
}

export function sanitizeSvg(txt) {
  const doc = new DOMParser().parseFromString(txt, "image/svg+xml");
  const root = doc.documentElement;
  if (!root || root.localName !== "svg" || root.namespaceURI !== SVG_NS || doc.querySelector("parsererror")) return null;
  const walk = (el) => {
    for (const kid of [...el.children]) {
      if (kid.namespaceURI !== SVG_NS || !ALLOWED.has(kid.localName.toLowerCase())) kid.remove();
      else walk(kid);
    }
    for (const a of [...el.attributes]) {
      const n = a.name.toLowerCase();
      if (n.startsWith("on") || n === "href" || n.endsWith(":href") || n === "src" ||
          (n === "style" && /url\s*\(|expression|javascript:/i.test(a.value))) el.removeAttribute(a.name);
    }
  };
  walk(root);
  const svg = document.importNode(root, true);
  const vb = (svg.getAttribute("viewBox") || "").split(/[\s,]+/).map(Number);
  svg.removeAttribute("width");
  svg.removeAttribute("height");
  if (vb.length === 4 && vb[2] > 0) svg.style.maxWidth = `${Math.round(vb[2] * 1.2)}px`; // no bigger than drawn
  svg.setAttribute("role", "img");
  return svg;
}
