// DOM helpers, the JSON tree, the state diff, JSON validation with a position,
// times. Everything here builds nodes with createElement/textContent: no
// string ever becomes HTML.

// h("div", {class: "x", onclick: f, "data-testid": "y"}, child, "text", [more])
export function h(tag, attrs, ...kids) {
  const el = document.createElement(tag);
  if (attrs) {
    for (const k in attrs) {
      const v = attrs[k];
      if (v == null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  add(el, kids);
  return el;
}

function add(el, kids) {
  for (const k of kids) {
    if (k == null || k === false) continue;
    if (Array.isArray(k)) add(el, k);
    else el.append(k instanceof Node ? k : String(k));
  }
}

export function clear(el, ...kids) {
  el.replaceChildren();
  add(el, kids);
  return el;
}

export const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);

export function deepEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    if (a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  for (const k of ka) if (!Object.hasOwn(b, k) || !deepEqual(a[k], b[k])) return false;
  return true;
}

export const shortId = (id) => (id ? String(id).slice(0, 8) : "");

// A one-line JSON rendering, cut at max characters.
export function brief(v, max = 80) {
  let s;
  try { s = JSON.stringify(v); } catch { s = String(v); }
  if (s === undefined) s = String(v);
  return s.length > max ? s.slice(0, max - 1) + "…" : s;
}

const IDENT = /^[A-Za-z_$][\w$]*$/;
export const pathKey = (path, k) => (typeof k === "number" ? `${path}[${k}]` : IDENT.test(k) ? (path ? `${path}.${k}` : k) : `${path}[${JSON.stringify(k)}]`);

// ---- the collapsible JSON tree ----------------------------------------------

const MAX_KIDS = 200;

function scalar(v) {
  if (v === null) return h("span", { class: "j-null" }, "null");
  if (typeof v === "string") return h("span", { class: "j-str" }, JSON.stringify(v));
  if (typeof v === "number") return h("span", { class: "j-num" }, String(v));
  if (typeof v === "boolean") return h("span", { class: "j-bool" }, String(v));
  return h("span", null, String(v));
}

// The tree of value: objects and arrays are <details> (keyboard: Enter/Space
// on the summary), open to depth `open`; closed ones build their children
// when first opened.
export function jsonTree(value, { open = 2, label = null } = {}) {
  return h("div", { class: "jtree", "data-testid": "json-tree" }, node(label, value, 0, open));
}

function keyEl(label) {
  if (label == null) return null;
  return [h("span", { class: "j-key" }, typeof label === "number" ? String(label) : label), h("span", { class: "j-punct" }, ": ")];
}

function node(label, v, depth, open) {
  if (v === null || typeof v !== "object") return h("div", { class: "j-row" }, keyEl(label), scalar(v));
  const arr = Array.isArray(v);
  const keys = arr ? null : Object.keys(v);
  const n = arr ? v.length : keys.length;
  const sum = arr ? `[${n} item${n === 1 ? "" : "s"}]` : `{${n} key${n === 1 ? "" : "s"}}`;
  if (n === 0) return h("div", { class: "j-row" }, keyEl(label), h("span", { class: "j-punct" }, arr ? "[]" : "{}"));
  const det = h("details", { class: "j-node" }, h("summary", null, keyEl(label), h("span", { class: "j-sum" }, sum)));
  const kids = h("div", { class: "j-kids" });
  det.append(kids);
  let built = false;
  const build = () => {
    if (built) return;
    built = true;
    const shown = Math.min(n, MAX_KIDS);
    for (let i = 0; i < shown; i++) kids.append(arr ? node(i, v[i], depth + 1, open) : node(keys[i], v[keys[i]], depth + 1, open));
    if (n > shown) {
      let at = shown;
      const more = h("button", { class: "link", type: "button" }, `show ${n - shown} more`);
      more.addEventListener("click", () => {
        const end = Math.min(n, at + MAX_KIDS);
        for (; at < end; at++) more.before(arr ? node(at, v[at], depth + 1, open) : node(keys[at], v[keys[at]], depth + 1, open));
        if (at >= n) more.remove(); else more.textContent = `show ${n - at} more`;
      });
      kids.append(more);
    }
  };
  if (depth < open) { det.open = true; build(); } else det.addEventListener("toggle", build, { once: true });
  return det;
}

// ---- the diff of two states ---------------------------------------------------

// Entries {kind: added|removed|changed|appended, path, from, to, items}.
// Lists that grew with their old items as a prefix are "appended".
export function diff(a, b, path = "", out = []) {
  if (deepEqual(a, b)) return out;
  if (isObj(a) && isObj(b)) {
    for (const k of Object.keys(a)) if (!Object.hasOwn(b, k)) out.push({ kind: "removed", path: pathKey(path, k), from: a[k] });
    for (const k of Object.keys(b)) {
      const p = pathKey(path, k);
      if (!Object.hasOwn(a, k)) out.push({ kind: "added", path: p, to: b[k] });
      else diff(a[k], b[k], p, out);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const n = Math.min(a.length, b.length);
    let same = 0;
    while (same < n && deepEqual(a[same], b[same])) same++;
    if (same === a.length) {
      out.push({ kind: "appended", path, items: b.slice(a.length), at: a.length });
      return out;
    }
    if (a.length === b.length && path.split("[").length < 6) {
      const before = out.length;
      for (let i = same; i < n; i++) diff(a[i], b[i], pathKey(path, i), out);
      if (out.length - before <= 20) return out;
      out.length = before;
    }
  }
  out.push({ kind: "changed", path, from: a, to: b });
  return out;
}

// ---- JSON with a position on errors ---------------------------------------------

// {ok: true, value} or {ok: false, message, line, col}: JSON.parse's verdict,
// with the position found by a small scanner of our own (browsers word and
// place their errors differently).
export function parseJSON(text) {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    const { msg, pos } = locate(text);
    const before = text.slice(0, pos);
    const line = before.split("\n").length;
    const col = pos - before.lastIndexOf("\n");
    return { ok: false, message: msg || e.message, line, col, pos };
  }
}

function locate(s) {
  let i = 0;
  const fail = (msg) => { throw { msg, pos: i }; };
  const ws = () => { while (i < s.length && " \t\n\r".includes(s[i])) i++; };
  const str = () => {
    i++;
    for (;;) {
      if (i >= s.length) fail("unterminated string");
      const c = s[i];
      if (c === '"') { i++; return; }
      if (c === "\\") {
        const e = s[i + 1];
        if (e !== undefined && '"\\/bfnrt'.includes(e)) i += 2;
        else if (e === "u" && /^[0-9a-fA-F]{4}$/.test(s.slice(i + 2, i + 6))) i += 6;
        else fail("bad escape in string");
      } else if (c < " ") fail("control character in string (use \\n)");
      else i++;
    }
  };
  const num = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
  const value = () => {
    ws();
    const c = s[i];
    if (c === "{") {
      i++; ws();
      if (s[i] === "}") { i++; return; }
      for (;;) {
        ws();
        if (s[i] !== '"') fail(i >= s.length ? "unexpected end of input" : "expected a property name in double quotes");
        str(); ws();
        if (s[i] !== ":") fail("expected ':'");
        i++; value(); ws();
        if (s[i] === ",") { i++; continue; }
        if (s[i] === "}") { i++; return; }
        fail(i >= s.length ? "unexpected end of input" : "expected ',' or '}'");
      }
    }
    if (c === "[") {
      i++; ws();
      if (s[i] === "]") { i++; return; }
      for (;;) {
        value(); ws();
        if (s[i] === ",") { i++; continue; }
        if (s[i] === "]") { i++; return; }
        fail(i >= s.length ? "unexpected end of input" : "expected ',' or ']'");
      }
    }
    if (c === '"') return str();
    if (c === "-" || (c >= "0" && c <= "9")) {
      num.lastIndex = i;
      if (!num.exec(s)) fail("bad number");
      i = num.lastIndex;
      return;
    }
    for (const w of ["true", "false", "null"]) if (s.startsWith(w, i)) { i += w.length; return; }
    if (i >= s.length) fail("unexpected end of input");
    fail(`unexpected ${JSON.stringify(c)}`);
  };
  try {
    value(); ws();
    if (i < s.length) fail("unexpected text after the value");
  } catch (e) {
    if (e && typeof e.pos === "number") return e;
    throw e;
  }
  return { msg: null, pos: s.length };
}

// A JSON editor: a textarea, its error (with line and column) next to it,
// onvalid(ok) after each edit so that callers can disable their buttons.
export function jsonEditor({ value = "{}", testid, label, rows = 4, onvalid }) {
  const id = "ed-" + Math.random().toString(36).slice(2, 9);
  const ta = h("textarea", { id, class: "code", rows, spellcheck: "false", autocomplete: "off", "data-testid": testid, "aria-describedby": id + "-err" });
  ta.value = value;
  const err = h("div", { class: "field-error", id: id + "-err", role: "status", "data-testid": testid + "-error" });
  const ed = { el: null, ta, valid: true, value: undefined };
  const check = () => {
    const r = parseJSON(ta.value);
    ed.valid = r.ok;
    ed.value = r.ok ? r.value : undefined;
    ta.setAttribute("aria-invalid", String(!r.ok));
    err.textContent = r.ok ? "" : `Invalid JSON at line ${r.line}, column ${r.col}: ${r.message}`;
    if (onvalid) onvalid(r.ok);
  };
  ta.addEventListener("input", check);
  ed.el = h("div", { class: "field" }, label ? h("label", { for: id }, label) : null, ta, err);
  ed.set = (text) => { ta.value = text; check(); };
  ed.check = check;
  queueMicrotask(check);
  return ed;
}

// ---- time ------------------------------------------------------------------------------

export function ago(iso) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return "";
  const s = Math.round((Date.now() - t) / 1000);
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  if (s < 86400 * 30) return `${Math.floor(s / 86400)} d ago`;
  return new Date(t).toLocaleDateString();
}

export function clock(iso) {
  const t = Date.parse(iso);
  if (!Number.isFinite(t)) return "";
  const d = new Date(t);
  const p = (n, w = 2) => String(n).padStart(w, "0");
  return `${p(d.getHours())}:${p(d.getMinutes())}:${p(d.getSeconds())}.${p(d.getMilliseconds(), 3)}`;
}

export function timeEl(iso, rel = true) {
  if (!iso) return h("span", { class: "muted" }, "—");
  return h("time", { datetime: iso, title: new Date(Date.parse(iso)).toLocaleString() }, rel ? ago(iso) : clock(iso));
}

// ---- status ---------------------------------------------------------------------------

// Small icons drawn as SVG (fonts with these symbols are not everywhere).
const ICONS = {
  pause: "M4 3h3v10H4zM9 3h3v10H9z",
  branch: "M4 2.5a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3zM4 10.5a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3zM12 2.5a1.5 1.5 0 1 1 0 3 1.5 1.5 0 0 1 0-3zM3.3 5h1.4v5.5H3.3zM11.3 5h1.4v1.2c0 2.6-2.2 3.5-4.4 3.9-1.6.3-2.6.7-3.3 1.6l-1-1c1-1.2 2.4-1.7 4-2 1.9-.4 3.3-1 3.3-2.5z",
  user: "M8 8a3 3 0 1 0 0-6 3 3 0 0 0 0 6zm-5.5 6.5c0-3 2.4-5 5.5-5s5.5 2 5.5 5z",
  bot: "M4 5h8a1.5 1.5 0 0 1 1.5 1.5v5A1.5 1.5 0 0 1 12 13H4a1.5 1.5 0 0 1-1.5-1.5v-5A1.5 1.5 0 0 1 4 5zM7.25 1.5h1.5V5h-1.5zM5.2 8.5a1.1 1.1 0 1 0 2.2 0 1.1 1.1 0 1 0-2.2 0zM8.6 8.5a1.1 1.1 0 1 0 2.2 0 1.1 1.1 0 1 0-2.2 0z",
  tool: "M10.6 1.5a3.9 3.9 0 0 0-3.7 5.1L1.5 12l2.5 2.5 5.4-5.4a3.9 3.9 0 0 0 5.1-3.7l-.1-.8-2.2 2.2-2-.5-.5-2 2.2-2.2z",
  system: "M7 1.5h2l.4 1.8 1.3.6 1.6-1 1.4 1.4-1 1.6.6 1.3 1.7.4v2l-1.7.4-.6 1.3 1 1.6-1.4 1.4-1.6-1-1.3.6L9 14.5H7l-.4-1.8-1.3-.6-1.6 1-1.4-1.4 1-1.6-.6-1.3-1.7-.4v-2l1.7-.4.6-1.3-1-1.6 1.4-1.4 1.6 1 1.3-.6zM8 5.5a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5z",
};
export function icon(name) {
  const NS = "http://www.w3.org/2000/svg";
  const svg = document.createElementNS(NS, "svg");
  svg.setAttribute("viewBox", "0 0 16 16");
  svg.setAttribute("class", "icon");
  svg.setAttribute("aria-hidden", "true");
  const p = document.createElementNS(NS, "path");
  p.setAttribute("d", ICONS[name] || "");
  p.setAttribute("fill-rule", "evenodd");
  svg.append(p);
  return svg;
}

const STATUS = { idle: "○", busy: "◐", interrupted: "pause", error: "✕" };
export function statusBadge(status, testid) {
  const s = STATUS[status] ? status : "unknown";
  const ic = STATUS[s] === "pause" ? icon("pause") : STATUS[s] || "?";
  return h("span", { class: `badge st-${s}`, "data-testid": testid, "data-status": s },
    h("span", { class: "badge-icon", "aria-hidden": "true" }, ic), s);
}

// Arrow keys (and Home/End) move the focus through the items of a list
// (roving tabindex: one item is in the tab order); Enter follows the link.
export function rovingList(container, selector) {
  container.addEventListener("keydown", (e) => {
    if (!["ArrowDown", "ArrowUp", "Home", "End"].includes(e.key)) return;
    const items = [...container.querySelectorAll(selector)];
    if (!items.length) return;
    const i = items.indexOf(document.activeElement);
    let j = e.key === "ArrowDown" ? i + 1 : e.key === "ArrowUp" ? i - 1 : e.key === "Home" ? 0 : items.length - 1;
    if (i < 0) j = 0;
    j = Math.max(0, Math.min(items.length - 1, j));
    e.preventDefault();
    focusItem(items, j);
  });
  container.addEventListener("focusin", (e) => {
    const items = [...container.querySelectorAll(selector)];
    if (items.includes(e.target)) for (const it of items) it.tabIndex = it === e.target ? 0 : -1;
  });
}

export function focusItem(items, j) {
  for (const it of items) it.tabIndex = -1;
  items[j].tabIndex = 0;
  items[j].focus();
  items[j].scrollIntoView({ block: "nearest" });
}
