// #/threads/<id>[/<checkpoint_id>]: a thread's checkpoint timeline (paged
// through POST /threads/{id}/history with limit/before, branches drawn where
// forks left the line), the selected checkpoint (state tree, diff against its
// parent, tasks, errors, interrupts, the graph with its nodes highlighted),
// and live runs streamed over SSE into all of it; the chat view when the
// state has messages.
import { h, icon, clear, jsonTree, diff, brief, deepEqual, isObj, statusBadge, timeEl, clock, shortId, jsonEditor, rovingList, focusItem } from "./ui.js";
import * as A from "./api.js";
import { renderMessages, roleOf, toolCalls, withArgs } from "./chat.js";

const FIRST = 50, PAGE = 100; // checkpoints in the first page, in each further one
const LIVE_MAX = 400; // rows kept while a run streams
const MODES = ["values", "updates", "messages-tuple", "checkpoints", "tasks"];
const ROW_H = 46, LANE_W = 14;
const enc = encodeURIComponent;

const cpid = (cp) => cp.checkpoint && cp.checkpoint.checkpoint_id;
const parentId = (cp) => (cp.parent_checkpoint && cp.parent_checkpoint.checkpoint_id) || null;
const schemaCache = new Map();

function schemaOf(graphId) {
  if (!schemaCache.has(graphId)) {
    schemaCache.set(graphId, A.api("GET", `/assistants/${enc(graphId)}/schemas`).catch(() => null));
  }
  return schemaCache.get(graphId);
}

// ["a", "b", "b"] -> "a, b ×2"
function counted(names) {
  const n = new Map();
  for (const x of names) n.set(x, (n.get(x) || 0) + 1);
  return [...n].map(([k, c]) => (c > 1 ? `${k} ×${c}` : k)).join(", ");
}

// A `checkpoints` stream event as a history entry.
function fromEvent(d) {
  const c = (d.config && d.config.configurable) || {};
  const p = d.parent_config && d.parent_config.configurable;
  return {
    values: d.values, next: d.next || [], tasks: d.tasks || [], metadata: d.metadata || {},
    created_at: d.created_at || new Date().toISOString(),
    checkpoint: { thread_id: c.thread_id, checkpoint_ns: c.checkpoint_ns || "", checkpoint_id: c.checkpoint_id },
    parent_checkpoint: p ? { thread_id: p.thread_id, checkpoint_ns: p.checkpoint_ns || "", checkpoint_id: p.checkpoint_id } : null,
    __live: true,
  };
}

export function mountThread(root, threadId, selected) {
  const S = {
    id: threadId, thread: null, cps: [], byId: new Map(), extra: new Map(), more: false, loading: false,
    sel: selected || null, view: "timeline", live: null, lastRun: null, graphs: [], schema: null,
    stream: new Map(), destroyed: false, poll: null, forkOpen: false,
  };

  // ---- the skeleton -------------------------------------------------------------------
  const title = h("h1", { class: "mono thread-id", "data-testid": "thread-id", title: threadId }, threadId);
  const statusSlot = h("span", { "data-testid": "thread-status-slot" });
  const metaSlot = h("div", { class: "thead-meta" });
  const tabTimeline = h("button", { type: "button", class: "tab", "data-testid": "view-timeline", onclick: () => setView("timeline") }, "Timeline");
  const tabChat = h("button", { type: "button", class: "tab", "data-testid": "view-chat", hidden: true, onclick: () => setView("chat") }, "Chat");
  const head = h("header", { class: "thead", "data-testid": "thread-header" },
    h("a", { href: "#/threads", class: "back", "data-testid": "back" }, h("span", { "aria-hidden": "true" }, "← "), "Threads"),
    h("div", { class: "thead-title" }, title, statusSlot), metaSlot,
    h("div", { class: "tabs", role: "group", "aria-label": "View" }, tabTimeline, tabChat));

  // The run form.
  const asSel = h("select", { id: "run-assistant", "data-testid": "run-assistant" });
  const runBtn = h("button", { type: "submit", class: "btn primary", "data-testid": "run-button" }, "▶ Run");
  const runEd = jsonEditor({ value: "{}", testid: "run-input", label: "Input (JSON)", rows: 5, onvalid: () => syncButtons() });
  const runHint = h("div", { class: "hint", "data-testid": "run-hint" });
  const runForm = h("form", { class: "run-form", onsubmit: (e) => { e.preventDefault(); runInput(); } },
    h("div", { class: "field" }, h("label", { for: "run-assistant" }, "Assistant"), asSel), runEd.el, runHint,
    h("div", { class: "row-btns" }, runBtn));
  const runCard = h("details", { class: "card run-card", "data-testid": "run-card" }, h("summary", null, h("span", { class: "h3" }, "Run"), h("span", { class: "muted" }, " start a run on this thread")), runForm);

  const liveSlot = h("div", { class: "live", "data-testid": "run-status", role: "status", "aria-live": "polite" });
  const tl = h("ol", { class: "timeline", "data-testid": "timeline", "aria-label": "Checkpoints, newest first" });
  const moreBtn = h("button", { type: "button", class: "btn more", "data-testid": "timeline-more", hidden: true, onclick: () => loadMore() }, "Load older checkpoints");
  const tlCount = h("span", { class: "muted", "data-testid": "timeline-count" });
  const tlScroll = h("div", { class: "tl-scroll" }, tl, moreBtn);
  const tlCard = h("section", { class: "card timeline-card", "aria-labelledby": "tl-h" },
    h("div", { class: "card-head" }, h("h2", { id: "tl-h" }, "Timeline"), tlCount), tlScroll);

  const actions = h("div", { class: "actions", "data-testid": "actions" });
  const detail = h("div", { class: "detail", "data-testid": "checkpoint-detail" });
  const chat = h("section", { class: "chat", "data-testid": "chat", hidden: true, "aria-label": "Chat" });

  const body = h("div", { class: "thread-body" },
    h("div", { class: "col-left" }, runCard, liveSlot, tlCard),
    h("div", { class: "col-main" }, actions, detail, chat));
  clear(root, h("section", { class: "page thread-page" }, head, body));
  rovingList(tl, "a.cp-row");

  const io = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) loadMore(); }, { root: tlScroll, rootMargin: "200px" });
  io.observe(moreBtn);

  // ---- loading ----------------------------------------------------------------------------
  // Checkpoints newest first (their ids sort by time). The common cases, one new
  // head or an older page, skip the sort.
  function addCps(list) {
    const fresh = [];
    let replaced = false;
    for (const cp of list) {
      const id = cpid(cp);
      if (!id) continue;
      if (S.byId.has(id)) replaced = true; else fresh.push(cp);
      S.byId.set(id, cp);
    }
    if (replaced) S.cps = S.cps.map((c) => S.byId.get(cpid(c)));
    if (!fresh.length) return;
    const first = S.cps.length ? cpid(S.cps[0]) : null;
    const last = S.cps.length ? cpid(S.cps[S.cps.length - 1]) : null;
    const ids = fresh.map(cpid);
    const desc = ids.every((id, i) => i === 0 || ids[i - 1] > id);
    if (desc && (first === null || ids[ids.length - 1] > first)) S.cps = fresh.concat(S.cps);
    else if (desc && ids[0] < last) S.cps = S.cps.concat(fresh);
    else S.cps = [...S.byId.values()].sort((a, b) => (cpid(a) < cpid(b) ? 1 : cpid(a) > cpid(b) ? -1 : 0));
  }

  async function loadFirst() {
    const [t, page, as] = await Promise.all([A.getThread(S.id), A.history(S.id, FIRST), A.assistants().catch(() => [])]);
    if (S.destroyed) return;
    S.thread = t;
    // A thread `superstep run` wrote names no graph: the server reads it as its one graph's.
    const ids = new Set((as || []).map((a) => a.graph_id));
    S.onlyGraph = ids.size === 1 ? [...ids][0] : null;
    addCps(page);
    S.more = page.length === FIRST;
    const g = graphId();
    if (g && !S.schema) S.schema = await schemaOf(g);
  }

  async function loadMore() {
    if (!S.more || S.loading || !S.cps.length) return;
    S.loading = true;
    moreBtn.disabled = true;
    moreBtn.textContent = "Loading…";
    try {
      const from = S.cps.length;
      const last = cpid(S.cps[from - 1]);
      const page = await A.history(S.id, PAGE, last);
      addCps(page);
      S.more = page.length === PAGE;
      if (S.cps.length >= from && cpid(S.cps[from - 1]) === last) appendTimeline(from); else renderTimeline();
      if (!selectedCp() || S.sel) renderDetail();
    } catch (e) {
      toast(`Could not load older checkpoints: ${e.message}`);
    } finally {
      S.loading = false;
      moreBtn.disabled = false;
      moreBtn.textContent = "Load older checkpoints";
    }
  }

  async function refresh() {
    try {
      const [t, page] = await Promise.all([A.getThread(S.id), A.history(S.id, FIRST)]);
      if (S.destroyed) return;
      S.thread = t;
      addCps(page); // streamed checkpoints older than this page stay as they came
      if (S.cps.length <= FIRST) S.more = page.length === FIRST;
    } catch (e) {
      toast(`Could not refresh: ${e.message}`);
    }
    renderAll();
    watchBusy();
  }

  // A thread busy with a run we did not start: join its stream, else poll.
  async function watchBusy() {
    clearTimeout(S.poll);
    if (S.destroyed || S.live || !S.thread || S.thread.status !== "busy") return;
    try {
      const runs = await A.runsOf(S.id);
      const run = (runs || []).find((r) => r.status === "running" || r.status === "pending");
      if (run && !S.live) {
        await follow(null, run.run_id);
        return;
      }
    } catch { /* poll instead */ }
    S.poll = setTimeout(() => refresh(), 1500);
  }

  const graphId = () => (S.thread && S.thread.metadata && S.thread.metadata.graph_id) ||
    (S.cps[0] && S.cps[0].metadata && S.cps[0].metadata.graph_id) || S.onlyGraph || null;
  const assistantId = () => asSel.value || (S.thread && S.thread.metadata && (S.thread.metadata.assistant_id || S.thread.metadata.graph_id)) || graphId();
  const headCp = () => S.cps[0] || null;
  const selectedCp = () => (S.sel ? S.byId.get(S.sel) || S.extra.get(S.sel) || null : headCp());

  // ---- rendering ------------------------------------------------------------------------
  let pending = 0;
  function schedule(what) {
    const first = !pending;
    pending |= what;
    if (!first) return;
    const run = () => {
      if (!pending) return;
      const w = pending;
      pending = 0;
      if (w & 1) renderTimeline();
      if (w & 2) renderDetail();
      if (w & 4) renderHeader();
      if (w & 8) renderActions();
      if (w & 16) renderChat();
    };
    requestAnimationFrame(run);
    setTimeout(run, 60); // rAF does not run in hidden tabs
  }

  function renderAll() {
    renderHeader();
    renderTimeline();
    renderActions();
    renderDetail();
    renderChat();
    syncButtons();
  }

  function hasMessages() {
    const hv = headCp() && headCp().values;
    if (hv && Array.isArray(hv.messages)) return true;
    const p = S.schema && S.schema.state_schema && S.schema.state_schema.properties;
    return Boolean(p && Object.hasOwn(p, "messages"));
  }

  function renderHeader() {
    const t = S.thread;
    if (!t) return;
    const status = S.live ? "busy" : t.status;
    clear(statusSlot, statusBadge(status, "thread-status"));
    const meta = t.metadata || {};
    const chips = Object.keys(meta).filter((k) => k !== "graph_id" && k !== "assistant_id").slice(0, 8)
      .map((k) => h("span", { class: "chip" }, h("span", { class: "chip-k" }, k), "=", typeof meta[k] === "string" ? meta[k] : brief(meta[k], 40)));
    clear(metaSlot,
      h("span", null, h("span", { class: "muted" }, "graph "), h("strong", { "data-testid": "thread-graph" }, graphId() || "none")),
      h("span", null, h("span", { class: "muted" }, "updated "), timeEl(t.updated_at)),
      chips.length ? h("span", { class: "chips", "data-testid": "thread-metadata" }, chips) : null);
    const chatOk = hasMessages();
    tabChat.hidden = !chatOk;
    tabTimeline.parentElement.hidden = !chatOk;
    if (!chatOk && S.view === "chat") S.view = "timeline";
    tabTimeline.setAttribute("aria-pressed", String(S.view === "timeline"));
    tabChat.setAttribute("aria-pressed", String(S.view === "chat"));
    document.title = `Thread ${shortId(S.id)} · superstep`;
  }

  function setView(v) {
    S.view = v;
    body.dataset.view = v;
    renderHeader();
    detail.hidden = v !== "timeline";
    chat.hidden = v !== "chat";
    if (v === "chat") renderChat(); else renderDetail();
  }

  // Lanes: every row takes the lane that waits for its id (a new one for a
  // branch's newest checkpoint); two lanes waiting for one id join there: that
  // checkpoint is where a fork left the line. Rows from index `from` on are laid
  // out again, continuing the lanes the rows above left.
  let laid = { rows: [], lanes: [] };
  function layout(from = 0) {
    const lanes = from ? laid.lanes.slice() : [];
    const rows = from ? laid.rows.slice(0, from) : [];
    for (let i = from; i < S.cps.length; i++) {
      const cp = S.cps[i];
      const id = cpid(cp);
      const incoming = lanes.slice();
      let mine = -1;
      const joined = [];
      for (let k = 0; k < lanes.length; k++) {
        if (lanes[k] === id) { if (mine < 0) mine = k; else joined.push(k); }
      }
      const tip = mine < 0;
      if (tip) { mine = lanes.indexOf(null); if (mine < 0) { mine = lanes.length; lanes.push(null); } }
      for (const k of joined) lanes[k] = null;
      lanes[mine] = parentId(cp);
      while (lanes.length && lanes[lanes.length - 1] == null) lanes.pop();
      rows.push({ cp, lane: mine, incoming, outgoing: lanes.slice(), joined, tip });
    }
    laid = { rows, lanes };
    return rows;
  }
  const rowWidth = (r) => Math.max(r.incoming.length, r.outgoing.length, r.lane + 1) * LANE_W;
  let gutterW = LANE_W;

  const SVG = "http://www.w3.org/2000/svg";
  function gutter(r, width) {
    const svg = document.createElementNS(SVG, "svg");
    svg.setAttribute("class", "gutter");
    svg.setAttribute("width", width);
    svg.setAttribute("height", ROW_H);
    svg.setAttribute("aria-hidden", "true");
    const x = (k) => 7 + k * LANE_W;
    const mid = ROW_H / 2;
    const line = (x1, y1, x2, y2, k) => {
      const p = document.createElementNS(SVG, "path");
      p.setAttribute("d", x1 === x2 ? `M${x1} ${y1}V${y2}` : `M${x1} ${y1}C${x1} ${y2} ${x2} ${y1} ${x2} ${y2}`);
      p.setAttribute("class", `ln l${k % 6}`);
      svg.append(p);
    };
    r.incoming.forEach((v, k) => {
      if (v == null) return;
      if (k === r.lane || r.joined.includes(k)) line(x(k), 0, x(r.lane), mid, k);
      else line(x(k), 0, x(k), ROW_H, k);
    });
    if (r.outgoing[r.lane] != null) line(x(r.lane), mid, x(r.lane), ROW_H, r.lane);
    const c = document.createElementNS(SVG, "circle");
    c.setAttribute("cx", x(r.lane));
    c.setAttribute("cy", mid);
    c.setAttribute("r", 4.5);
    c.setAttribute("class", `dot l${r.lane % 6}`);
    svg.append(c);
    return svg;
  }

  function writers(cp) {
    const src = cp.metadata && cp.metadata.source;
    if (src === "input") return "input";
    if (src === "update" || src === "fork") {
      const w = cp.metadata.writes;
      return isObj(w) && Object.keys(w).length ? "edited as " + Object.keys(w).join(", ") : "edited";
    }
    const p = parentId(cp) && S.byId.get(parentId(cp));
    if (!p) return parentId(cp) ? "…" : "";
    let names = (p.tasks || []).filter((t) => t.result !== undefined && t.result !== null).map((t) => t.name);
    // Streamed checkpoints carry no results: the tasks that ran from the parent wrote this one.
    if (!names.length && p.__live) names = (p.tasks || []).filter((t) => !t.error && !(t.interrupts && t.interrupts.length)).map((t) => t.name);
    return names.length ? "wrote " + [...new Set(names)].join(", ") : "no writes";
  }

  function rowEl(r, selId, head, focused) {
    const cp = r.cp;
    const id = cpid(cp);
    const md = cp.metadata || {};
    const tasks = cp.tasks || [];
    const err = tasks.find((t) => t.error);
    const intr = tasks.some((t) => t.interrupts && t.interrupts.length);
    const src = md.source || "?";
    const flags = [];
    if (cp === head) flags.push(h("span", { class: "flag f-head" }, "head"));
    else if (r.tip) flags.push(h("span", { class: "flag f-branch" }, icon("branch"), "branch"));
    if (r.joined.length) flags.push(h("span", { class: "flag f-fork", title: "a fork left the line here" }, icon("branch"), `${r.joined.length + 1} branches`));
    if (err) flags.push(h("span", { class: "flag f-err" }, "✕ error"));
    if (intr) flags.push(h("span", { class: "flag f-int" }, icon("pause"), "interrupt"));
    return h("li", null, h("a", {
      class: "cp-row", href: `#/threads/${enc(S.id)}/${enc(id)}`, tabindex: (focused ? focused === id : id === selId) ? "0" : "-1",
      "data-testid": "timeline-row", "data-checkpoint-id": id, "data-step": md.step, "data-source": src, "data-lane": r.lane,
      "aria-current": id === selId ? "true" : null,
    },
    gutter(r, gutterW),
    h("span", { class: "cp-main" },
      h("span", { class: "cp-l1" }, h("span", { class: "cp-step" }, `step ${md.step ?? "?"}`), h("span", { class: `src src-${src}` }, src),
        h("span", { class: "cp-writers", "data-testid": "cp-writers" }, writers(cp)), flags),
      h("span", { class: "cp-l2" }, h("time", { datetime: cp.created_at }, clock(cp.created_at)),
        cp.next && cp.next.length ? h("span", { class: "cp-next" }, "→ " + counted(cp.next)) : h("span", { class: "cp-next muted" }, "→ end")))));
  }

  function timelineFooter() {
    moreBtn.hidden = !S.more;
    tlCount.textContent = `${S.cps.length.toLocaleString()}${S.more ? "+" : ""} checkpoint${S.cps.length === 1 ? "" : "s"}`;
  }

  function renderTimeline() {
    const rows = layout();
    gutterW = Math.max(LANE_W, ...rows.map(rowWidth));
    const sel = selectedCp();
    const selId = sel && cpid(sel);
    const head = headCp();
    const frag = document.createDocumentFragment();
    const focused = document.activeElement && document.activeElement.dataset && document.activeElement.dataset.checkpointId;
    for (const r of rows) frag.append(rowEl(r, selId, head, focused));
    if (!rows.length) frag.append(h("li", { class: "empty" }, S.thread ? "No checkpoints yet: start a run." : "Loading…"));
    clear(tl, frag);
    if (!tl.querySelector("a.cp-row[tabindex='0']")) { const f = tl.querySelector("a.cp-row"); if (f) f.tabIndex = 0; }
    if (focused) { const f = tl.querySelector(`a.cp-row[tabindex='0']`); if (f && f.dataset.checkpointId === focused) f.focus({ preventScroll: true }); }
    timelineFooter();
  }

  // Older checkpoints came after the `from` rows drawn: lay out and draw only
  // them (and the row above them, whose writers are known now).
  function appendTimeline(from) {
    if (!from || tl.children.length !== from) return renderTimeline();
    const rows = layout(from);
    const w = Math.max(gutterW, ...rows.slice(from).map(rowWidth));
    if (w !== gutterW) {
      gutterW = w;
      for (const g of tl.querySelectorAll("svg.gutter")) g.setAttribute("width", w);
    }
    const sel = selectedCp();
    const selId = sel && cpid(sel);
    const head = headCp();
    const prev = tl.children[from - 1];
    const wasFocused = prev.contains(document.activeElement);
    const again = rowEl(rows[from - 1], selId, head, null);
    again.firstChild.tabIndex = prev.firstChild.tabIndex;
    prev.replaceWith(again);
    if (wasFocused) again.firstChild.focus({ preventScroll: true });
    const frag = document.createDocumentFragment();
    for (let i = from; i < rows.length; i++) frag.append(rowEl(rows[i], selId, head, null));
    tl.append(frag);
    timelineFooter();
  }

  // ---- the selected checkpoint ----------------------------------------------------------
  function renderDetail() {
    if (S.view !== "timeline") return;
    const cp = selectedCp();
    if (!cp) {
      if (S.sel && !S.extra.has(S.sel)) {
        clear(detail, h("p", { class: "muted" }, "Loading checkpoint…"));
        A.checkpointState(S.id, S.sel).then((s) => { S.extra.set(S.sel, s); renderDetail(); renderTimeline(); })
          .catch((e) => clear(detail, h("p", { class: "error" }, `Checkpoint ${S.sel}: ${e.message}`)));
      } else {
        clear(detail, h("div", { class: "card empty-state" }, h("h2", null, "No checkpoints yet"),
          h("p", null, "Open ", h("strong", null, "Run"), " on the left, give an input and start a run: its checkpoints appear here as they are written.")));
        runCard.open = true;
      }
      return;
    }
    const id = cpid(cp);
    const md = cp.metadata || {};
    const isHead = cp === headCp();
    const w = writers(cp);

    const forkBtn = h("button", { type: "button", class: "btn", "data-testid": "fork-open", "aria-expanded": String(S.forkOpen), onclick: () => { S.forkOpen = !S.forkOpen; renderDetail(); } }, icon("branch"), " Fork from here");
    const head = h("div", { class: "detail-head" },
      h("div", { class: "dh-title" },
        h("h2", { "data-testid": "detail-title" }, `Step ${md.step ?? "?"}`, " ", h("span", { class: `src src-${md.source}` }, md.source || "?"),
          isHead ? h("span", { class: "flag f-head" }, "head") : null),
        forkBtn),
      h("dl", { class: "facts" },
        h("div", null, h("dt", null, "checkpoint"), h("dd", { class: "mono", "data-testid": "detail-checkpoint-id" }, id)),
        h("div", null, h("dt", null, "written"), h("dd", null, cp.created_at ? timeEl(cp.created_at, false) : "—")),
        w ? h("div", null, h("dt", null, "by"), h("dd", { "data-testid": "detail-writers" }, w)) : null,
        h("div", null, h("dt", null, "next"), h("dd", { "data-testid": "detail-next" }, cp.next && cp.next.length ? counted(cp.next) : "end")),
        md.run_id ? h("div", null, h("dt", null, "run"), h("dd", { class: "mono" }, shortId(md.run_id))) : null));

    const parts = [head];
    if (S.forkOpen) parts.push(forkEditor(cp));
    const state = h("section", { class: "card", "data-testid": "state", "aria-labelledby": "st-h" }, h("div", { class: "card-head" }, h("h3", { id: "st-h" }, "State")), jsonTree(cp.values ?? {}, { open: 2 }));
    parts.push(h("div", { class: "grid2" }, graphCard(cp, isHead), h("div", { class: "stack" }, diffCard(cp), state)));
    if ((cp.tasks || []).length) parts.push(tasksCard(cp, isHead));
    clear(detail, parts);
  }

  function forkEditor(cp) {
    const values = cp.values || {};
    const btn = h("button", { type: "submit", class: "btn primary", "data-testid": "fork-button" }, icon("branch"), " Fork and run");
    const ed = jsonEditor({ value: JSON.stringify(values, null, 2), testid: "fork-input", label: "State at this checkpoint (edit, then fork)", rows: Math.min(14, 3 + JSON.stringify(values, null, 2).split("\n").length), onvalid: (ok) => { btn.disabled = !ok || Boolean(S.live); } });
    const msg = h("div", { class: "hint" }, "Only the fields you change are written, through each field's reducer, as a new checkpoint branching off this one; the run then continues from it.");
    const err = h("div", { class: "field-error", role: "status", "data-testid": "fork-error" });
    return h("form", { class: "card fork", "data-testid": "fork", onsubmit: async (e) => {
      e.preventDefault();
      if (!ed.valid) return;
      const edited = ed.value;
      if (!isObj(edited)) { err.textContent = "The state must be a JSON object."; return; }
      const changed = {};
      for (const k of Object.keys(edited)) if (!deepEqual(edited[k], values[k])) changed[k] = edited[k];
      if (!Object.keys(changed).length) { err.textContent = "Change a value first."; return; }
      btn.disabled = true;
      try {
        const r = await A.updateState(S.id, { checkpoint_id: cpid(cp), values: changed });
        const newId = r && r.checkpoint && r.checkpoint.checkpoint_id;
        S.forkOpen = false;
        if (location.hash !== `#/threads/${enc(S.id)}`) location.hash = `#/threads/${enc(S.id)}`;
        await start({ input: null, checkpoint_id: newId }, "fork");
      } catch (x) {
        err.textContent = `Fork failed: ${x.message}`;
        btn.disabled = false;
      }
    } }, ed.el, msg, err, h("div", { class: "row-btns" }, btn,
      h("button", { type: "button", class: "btn", onclick: () => { S.forkOpen = false; renderDetail(); } }, "Cancel")));
  }

  function graphCard(cp, isHead) {
    const g = graphId();
    const box = h("div", { class: "graph-box", "data-testid": "graph-svg" }, h("span", { class: "muted" }, g ? "Loading graph…" : "No graph"));
    const legend = h("ul", { class: "legend", "data-testid": "graph-legend" });
    const tasks = cp.tasks || [];
    const next = new Set(cp.next || []);
    const interrupted = new Set(tasks.filter((t) => t.interrupts && t.interrupts.length).map((t) => t.name));
    if (isHead && !S.live && S.thread && S.thread.status === "interrupted" && !interrupted.size) for (const n of next) interrupted.add(n);
    const failed = new Set(tasks.filter((t) => t.error).map((t) => t.name));
    const running = new Set(isHead && S.live ? S.live.running : []);
    const marks = [["running", running, "● running"], ["interrupted", interrupted, "interrupted", "pause"], ["failed", failed, "✕ failed"], ["next", next, "▶ next"]];
    for (const [k, set, label, ic] of marks) {
      const icon2 = ic ? [icon(ic), " "] : null;
      if (set.size) legend.append(h("li", { class: `lg lg-${k}`, "data-testid": `legend-${k}` }, h("span", { class: "lg-key" }, icon2, label), " ", [...set].join(", ")));
    }
    if (g) {
      A.graphSvg(g).then((svg) => {
        if (!svg) { clear(box, h("span", { class: "muted", "data-testid": "graph-unavailable" }, "graph unavailable")); return; }
        const pic = svg.cloneNode(true);
        for (const node of pic.querySelectorAll("g.node")) {
          const t = node.querySelector("title");
          const name = t ? t.textContent : "";
          node.setAttribute("data-node", name);
          for (const [k, set] of marks) if (set.has(name)) node.classList.add(`hl-${k}`);
        }
        const names = marks.filter(([, set]) => set.size).map(([k, set]) => `${k}: ${[...set].join(", ")}`);
        pic.setAttribute("aria-label", `Graph ${g}${names.length ? "; " + names.join("; ") : ""}`);
        clear(box, pic);
      }).catch((e) => clear(box, h("span", { class: "muted", "data-testid": "graph-unavailable" }, `graph unavailable (${e.message})`)));
    }
    return h("section", { class: "card graph-card", "data-testid": "graph", "aria-labelledby": "gr-h" },
      h("div", { class: "card-head" }, h("h3", { id: "gr-h" }, "Graph"), g ? h("span", { class: "muted" }, g) : null), box, legend);
  }

  function diffCard(cp) {
    const pid = parentId(cp);
    const parent = pid ? S.byId.get(pid) || S.extra.get(pid) : null;
    const card = h("section", { class: "card diff-card", "data-testid": "diff", "aria-labelledby": "df-h" });
    const headEl = h("div", { class: "card-head" }, h("h3", { id: "df-h" }, "Changes"),
      h("span", { class: "muted" }, pid ? (parent ? `since step ${parent.metadata ? parent.metadata.step : "?"}` : "since the parent") : "first checkpoint"));
    if (pid && !parent) {
      A.checkpointState(S.id, pid).then((p) => { S.extra.set(pid, p); if (selectedCp() === cp) renderDetail(); })
        .catch(() => card.append(h("p", { class: "muted" }, "The parent checkpoint could not be read.")));
      return clear(card, headEl, h("p", { class: "muted" }, "Loading the parent…"));
    }
    const entries = diff(parent ? parent.values || {} : {}, cp.values || {});
    const list = h("ul", { class: "diff" });
    const SIGN = { added: "+", removed: "−", changed: "~", appended: "+" };
    for (const d of entries) {
      let val;
      if (d.kind === "appended") val = [h("span", { class: "d-note" }, `${d.items.length} item${d.items.length === 1 ? "" : "s"} at ${d.at}: `), d.items.map((it, i) => [i ? ", " : "", valEl(it, "d-to")])];
      else if (d.kind === "changed") val = [valEl(d.from, "d-from"), h("span", { class: "d-arrow", "aria-label": "became" }, " → "), valEl(d.to, "d-to")];
      else if (d.kind === "added") val = valEl(d.to, "d-to");
      else val = valEl(d.from, "d-from");
      list.append(h("li", { class: `d d-${d.kind}`, "data-testid": "diff-row", "data-kind": d.kind, "data-path": d.path },
        h("span", { class: "d-sign", "aria-hidden": "true" }, SIGN[d.kind]),
        h("span", { class: "d-kind" }, d.kind), h("code", { class: "d-path" }, d.path || "(whole list)"), h("span", { class: "d-val" }, val)));
    }
    if (!entries.length) list.append(h("li", { class: "muted", "data-testid": "diff-empty" }, "No change to the state."));
    return clear(card, headEl, list);
  }

  function valEl(v, cls) {
    const s = brief(v, 120);
    if (s.length < 120) return h("code", { class: cls }, s);
    return h("details", { class: `d-long ${cls}` }, h("summary", null, h("code", null, s)), jsonTree(v, { open: 1 }));
  }

  function tasksCard(cp, isHead) {
    const running = isHead && S.live ? S.live.running : new Set();
    const list = h("ul", { class: "tasks" });
    for (const t of cp.tasks) {
      const hasResult = t.result !== undefined && t.result !== null;
      const ints = t.interrupts || [];
      let state;
      if (t.error) state = ["failed", "✕ failed"];
      else if (ints.length) state = ["interrupted", [icon("pause"), " interrupted"]];
      else if (running.has(t.name)) state = ["running", "● running"];
      else if (hasResult) state = ["done", isHead ? "✓ done (pending write)" : "✓ wrote"];
      else state = ["next", "▶ next"];
      list.append(h("li", { class: `task task-${state[0]}`, "data-testid": "task", "data-node": t.name, "data-state": state[0] },
        h("div", { class: "task-head" }, h("strong", { class: "mono" }, t.name), h("span", { class: "task-state" }, state[1]), h("span", { class: "muted mono", title: t.id }, shortId(t.id))),
        t.error ? h("div", { class: "task-error", "data-testid": "task-error", role: "note" }, h("strong", null, `${t.name} failed: `), typeof t.error === "string" ? t.error : brief(t.error, 500)) : null,
        ints.map((i) => h("div", { class: "interrupt", "data-testid": "interrupt" }, h("div", { class: "muted" }, icon("pause"), " interrupt ", h("span", { class: "mono" }, i.id ? shortId(i.id) : "")), jsonTree(i.value, { open: 3 }))),
        hasResult ? h("details", { class: "task-result" }, h("summary", null, isHead ? "pending write" : "writes"), jsonTree(t.result, { open: 2 })) : null));
    }
    return h("section", { class: "card", "data-testid": "tasks", "aria-labelledby": "tk-h" }, h("div", { class: "card-head" }, h("h3", { id: "tk-h" }, "Tasks"), h("span", { class: "muted" }, isHead ? "what runs next" : "what ran from here")), list);
  }

  // ---- what the thread waits for: resume, tool-call approval, continue ------------------
  function pendingApproval(hd) {
    if (!hd || !hd.next || !hd.next.length) return null;
    if ((hd.tasks || []).some((t) => (t.interrupts && t.interrupts.length) || t.error)) return null;
    const msgs = hd.values && hd.values.messages;
    if (!Array.isArray(msgs) || !msgs.length) return null;
    const last = msgs[msgs.length - 1];
    const calls = toolCalls(last);
    if (roleOf(last) !== "assistant" || !calls.length) return null;
    return { message: last, calls, node: hd.next[0] };
  }

  let actionsKey = null;
  function renderActions() {
    const hd = headCp();
    const t = S.thread;
    // Drawn again only when the head, the status or a run changes: keeps what the user types.
    const key = `${hd ? cpid(hd) : ""}|${t ? t.status : ""}|${S.live ? 1 : 0}`;
    if (key === actionsKey) return;
    actionsKey = key;
    const parts = [];
    if (hd && t && !S.live) {
      const ints = (hd.tasks || []).flatMap((k) => (k.interrupts || []).map((i) => ({ ...i, node: k.name })));
      const ap = pendingApproval(hd);
      const failed = (hd.tasks || []).filter((k) => k.error);
      if (ints.length) parts.push(resumeCard(ints));
      else if (ap && t.status === "interrupted") parts.push(approvalCard(ap));
      else if (failed.length && t.status === "error") parts.push(errorCard(failed));
      else if (t.status === "interrupted" && hd.next && hd.next.length) parts.push(continueCard(hd.next));
    }
    clear(actions, parts);
    if (S.view === "chat") renderChat();
  }

  function resumeCard(ints) {
    const btn = h("button", { type: "submit", class: "btn primary", "data-testid": "resume-button" }, "▶ Resume");
    const ed = jsonEditor({ value: '"yes"', testid: "resume-input", label: "Resume value (JSON)", rows: 2, onvalid: (ok) => { btn.disabled = !ok || Boolean(S.live); } });
    return h("form", { class: "card action-card ac-interrupt", "data-testid": "resume", onsubmit: (e) => {
      e.preventDefault();
      if (ed.valid) start({ command: { resume: ed.value } }, "resume");
    } },
    h("h3", null, icon("pause"), " ", `Waiting for input at ${[...new Set(ints.map((i) => i.node))].join(", ")}`),
    ints.map((i) => h("div", { class: "interrupt", "data-testid": "interrupt-value" }, jsonTree(i.value, { open: 3 }))),
    ed.el, h("div", { class: "row-btns" }, btn));
  }

  function approvalCard(ap) {
    const eds = ap.calls.map((c) => jsonEditor({ value: JSON.stringify(c.args, null, 2), testid: "tool-args", label: `Arguments of ${c.name}`, rows: Math.min(10, JSON.stringify(c.args, null, 2).split("\n").length), onvalid: () => sync() }));
    const approve = h("button", { type: "button", class: "btn primary", "data-testid": "approve-button", onclick: () => start({ input: null }, "approve") }, "✓ Approve");
    const edit = h("button", { type: "button", class: "btn", "data-testid": "edit-button", onclick: async () => {
      const calls = ap.message.tool_calls.map((raw, i) => withArgs(ap.calls[i], eds[i].value));
      await act(() => A.updateState(S.id, { values: { messages: [{ ...ap.message, tool_calls: calls }] } }), "edit");
    } }, "✎ Save edits and run");
    const reject = h("button", { type: "button", class: "btn danger", "data-testid": "reject-button", onclick: async () => {
      const lc = ap.message.role === undefined && ap.message.type !== undefined;
      const msgs = ap.calls.map((c) => ({ ...(lc ? { type: "tool" } : { role: "tool" }), tool_call_id: c.id, name: c.name, content: `Rejected by the user: the call ${c.name} was not run.` }));
      await act(() => A.updateState(S.id, { as_node: ap.node, values: { messages: msgs } }), "reject");
    } }, "✕ Reject");
    function sync() {
      const ok = eds.every((e) => e.valid);
      const changed = ok && eds.some((e, i) => !deepEqual(e.value, ap.calls[i].args));
      edit.disabled = !changed || Boolean(S.live);
      approve.disabled = Boolean(S.live);
    }
    queueMicrotask(sync);
    return h("section", { class: "card action-card ac-approval", "data-testid": "approvals" },
      h("h3", null, icon("pause"), " ", `${ap.calls.length} tool call${ap.calls.length === 1 ? "" : "s"} waiting for approval before ${ap.node}`),
      ap.calls.map((c, i) => h("div", { class: "approval", "data-testid": "approval", "data-tool": c.name },
        h("div", { class: "mono" }, h("strong", null, c.name), " ", h("span", { class: "muted" }, c.id || "")), eds[i].el)),
      h("div", { class: "row-btns" }, approve, edit, reject));
  }

  async function act(write, why) {
    try {
      await write();
      await start({ input: null }, why);
    } catch (e) {
      toast(`${why} failed: ${e.message}`);
    }
  }

  function errorCard(failed) {
    return h("section", { class: "card action-card ac-error", "data-testid": "run-error-card" },
      h("h3", null, h("span", { "aria-hidden": "true" }, "✕ "), "The last run failed"),
      failed.map((t) => h("p", { class: "task-error", "data-testid": "task-error" }, h("strong", null, `${t.name}: `), typeof t.error === "string" ? t.error : brief(t.error, 500))),
      h("div", { class: "row-btns" }, h("button", { type: "button", class: "btn", "data-testid": "retry-button", onclick: () => start({ input: null }, "retry") }, "↻ Retry from the last checkpoint")));
  }

  function continueCard(next) {
    return h("section", { class: "card action-card ac-interrupt", "data-testid": "paused" },
      h("h3", null, icon("pause"), " ", `Paused before ${next.join(", ")}`),
      h("div", { class: "row-btns" }, h("button", { type: "button", class: "btn primary", "data-testid": "continue-button", onclick: () => start({ input: null }, "continue") }, "▶ Continue")));
  }

  // ---- chat ------------------------------------------------------------------------------
  function chatMessages() {
    const src = (S.live && S.live.values) || (headCp() && headCp().values) || {};
    const msgs = Array.isArray(src.messages) ? src.messages.slice() : [];
    const ids = new Set(msgs.map((m) => m.id && String(m.id)));
    for (const [id, m] of S.stream) if (!ids.has(id)) msgs.push(m);
    return msgs;
  }

  let chatTexts = new Map();
  const chatInput = h("textarea", { id: "chat-input", rows: 2, "data-testid": "chat-input", placeholder: "Write a message…", "aria-label": "Message" });
  const chatSend = h("button", { type: "submit", class: "btn primary", "data-testid": "chat-send" }, "Send");
  const composer = h("form", { class: "composer", onsubmit: (e) => {
    e.preventDefault();
    const text = chatInput.value.trim();
    if (!text || S.live) return;
    const msgs = chatMessages();
    const lc = msgs.length && msgs.every((m) => m.role === undefined && m.type !== undefined);
    chatInput.value = "";
    start({ input: { messages: [lc ? { type: "human", content: text } : { role: "user", content: text }] } }, "chat");
  } }, chatInput, chatSend);
  chatInput.addEventListener("keydown", (e) => { if (e.key === "Enter" && !e.shiftKey) { e.preventDefault(); composer.requestSubmit(); } });

  function renderChat() {
    if (S.view !== "chat") return;
    const hd = headCp();
    const ap = !S.live && S.thread && S.thread.status === "interrupted" ? pendingApproval(hd) : null;
    const { el, texts } = renderMessages(chatMessages(), { pending: new Set(ap ? ap.calls.map((c) => c.id) : []) });
    chatTexts = texts;
    const scroller = chat.querySelector(".chat-scroll");
    const atEnd = !scroller || scroller.scrollTop + scroller.clientHeight >= scroller.scrollHeight - 40;
    const sc = h("div", { class: "chat-scroll" }, el);
    clear(chat, sc, composer);
    if (atEnd) sc.scrollTop = sc.scrollHeight;
    syncButtons();
  }

  // A messages-tuple event: a token chunk goes into its bubble as it comes.
  function onMessage(data) {
    const [m] = Array.isArray(data) ? data : [data];
    if (!m || m.id == null) return;
    const id = String(m.id);
    const chunk = typeof m.type === "string" && m.type.endsWith("Chunk");
    if (chunk) {
      const cur = S.stream.get(id);
      const delta = typeof m.content === "string" ? m.content : "";
      if (cur) {
        cur.content += delta;
        cur.__chunks++;
        const el = chatTexts.get(id);
        if (el && el.isConnected && S.view === "chat") { el.append(delta); el.closest("li").dataset.chunks = String(cur.__chunks); return; }
      } else {
        S.stream.set(id, { id, role: "assistant", content: delta, __streaming: true, __chunks: 1 });
      }
    } else {
      S.stream.set(id, m);
    }
    if (S.view === "chat") renderChat();
  }

  // ---- runs ----------------------------------------------------------------------------
  function syncButtons() {
    runBtn.disabled = !runEd.valid || Boolean(S.live) || !assistantId();
    chatSend.disabled = Boolean(S.live);
  }

  function runInput() {
    if (!runEd.valid) return;
    start({ input: runEd.value }, "run");
  }

  async function start(extra, why) {
    if (S.live) return;
    const body = { assistant_id: assistantId(), stream_mode: MODES, ...extra };
    const ctrl = new AbortController();
    S.live = { runId: null, ctrl, running: new Set(), values: null, events: 0, log: [], why, error: null, cancelled: false };
    S.stream.clear();
    runCard.open = false;
    renderAll();
    renderLive();
    let res;
    try {
      res = await A.streamRun(S.id, body, ctrl.signal);
    } catch (e) {
      S.live = null;
      S.lastRun = { error: e.message, why };
      renderAll();
      renderLive();
      return;
    }
    await consume(res);
  }

  async function follow(_, runId) {
    const ctrl = new AbortController();
    S.live = { runId, ctrl, running: new Set(), values: null, events: 0, log: [], why: "join", error: null, cancelled: false };
    renderAll();
    renderLive();
    try {
      await consume(await A.joinStream(S.id, runId, ctrl.signal));
    } catch {
      S.live = null;
      refresh();
    }
  }

  async function consume(res) {
    const L = S.live;
    try {
      for await (const ev of A.sse(res)) {
        if (S.destroyed) return;
        onEvent(ev);
      }
    } catch (e) {
      if (!S.destroyed && e.name !== "AbortError") L.error = L.error || e.message;
    }
    if (S.destroyed) return;
    // The card says how the run ended only once the timeline holds its checkpoints:
    // until the refresh is back it reads "loading" (a render due meanwhile shows that).
    const last = { runId: L.runId, error: L.error, cancelled: L.cancelled, why: L.why, events: L.events, loading: true };
    S.lastRun = last;
    S.live = null;
    S.stream.clear();
    await refresh();
    last.loading = false;
    renderLive();
  }

  function logEvent(name, text) {
    const L = S.live;
    L.log.push(`${name}${text ? ": " + text : ""}`);
    if (L.log.length > 40) L.log.shift();
  }

  function onEvent(ev) {
    const L = S.live;
    const d = ev.data;
    L.events++;
    const mode = ev.event.split("|")[0];
    switch (mode) {
      case "metadata":
        L.runId = d.run_id;
        logEvent("metadata", `run ${shortId(d.run_id)}`);
        break;
      case "checkpoints": {
        L.sawCheckpoints = true;
        const cp = fromEvent(d);
        addCps([cp]);
        if (S.cps.length > LIVE_MAX) { // a long run: keep the newest rows drawn, the rest a scroll away
          for (const old of S.cps.splice(LIVE_MAX)) if (cpid(old) !== S.sel) S.byId.delete(cpid(old));
          S.more = true;
        }
        logEvent("checkpoint", `step ${cp.metadata.step}`);
        schedule(1 | 2 | 8);
        break;
      }
      case "tasks": {
        const done = Object.hasOwn(d, "result") || Object.hasOwn(d, "error");
        if (done) {
          L.running.delete(d.name);
          for (const cp of S.cps.slice(0, 3)) for (const t of cp.tasks || []) if (t.id === d.id) { t.result = d.result; t.error = d.error || null; t.interrupts = d.interrupts || t.interrupts; }
        } else L.running.add(d.name);
        logEvent(done ? "task done" : "task", d.name);
        schedule(1 | 2);
        break;
      }
      case "values":
        L.values = d;
        logEvent("values", brief(d, 60));
        schedule(16);
        if (L.why === "join" && !L.sawCheckpoints) refreshHeadSoon(); // a joined run streaming no checkpoints
        break;
      case "updates":
        logEvent("updates", isObj(d) ? Object.keys(d).join(", ") : "");
        break;
      case "messages":
        onMessage(d);
        logEvent("token", typeof (d && d[0] && d[0].content) === "string" ? JSON.stringify(d[0].content) : "");
        break;
      case "error":
        L.error = isObj(d) ? `${d.error || "Error"}: ${d.message || ""}` : String(d);
        logEvent("error", L.error);
        break;
      default:
        logEvent(ev.event, "");
    }
    renderLiveSoon();
  }

  let headTimer = null;
  function refreshHeadSoon() {
    if (headTimer) return;
    headTimer = setTimeout(async () => {
      headTimer = null;
      try {
        const page = await A.history(S.id, FIRST);
        if (!S.destroyed) { addCps(page); schedule(1 | 2 | 8 | 16); }
      } catch { /* the next event tries again */ }
    }, 300);
  }

  let liveTimer = null;
  function renderLiveSoon() {
    if (liveTimer) return;
    liveTimer = setTimeout(() => { liveTimer = null; renderLive(); }, 50);
  }

  function renderLive() {
    const L = S.live;
    if (L) {
      const cancel = h("button", { type: "button", class: "btn danger", "data-testid": "cancel-button", disabled: !L.runId || L.cancelled, onclick: async () => {
        L.cancelled = true;
        renderLive();
        try { await A.cancelRun(S.id, L.runId); } catch (e) { toast(`Cancel failed: ${e.message}`); }
      } }, L.cancelled ? "Cancelling…" : "■ Cancel");
      clear(liveSlot, h("div", { class: "card live-card", "data-state": "running" },
        h("div", { class: "live-head" }, h("span", { class: "spinner", "aria-hidden": "true" }),
          h("span", { "data-testid": "run-state" }, `Running${L.runId ? " run " + shortId(L.runId) : "…"}`), h("span", { class: "muted" }, `${L.events} events`), cancel),
        h("ol", { class: "run-log", "data-testid": "run-log", "aria-label": "Stream events" }, L.log.slice(-8).map((s) => h("li", { class: "mono" }, s)))));
    } else if (S.lastRun) {
      const r = S.lastRun;
      const st = S.thread ? S.thread.status : "";
      const text = r.loading ? "Run ended, loading its checkpoints…" : r.error ? `Run failed: ${r.error}` : r.cancelled ? "Run cancelled" : st === "interrupted" ? "Run paused: it waits for input" : st === "error" ? "Run failed" : "Run finished";
      const kind = r.loading ? "loading" : r.error || st === "error" ? "error" : r.cancelled ? "cancelled" : st === "interrupted" ? "interrupted" : "done";
      clear(liveSlot, h("div", { class: `card live-card done-${kind}`, "data-state": kind },
        h("div", { class: "live-head" }, h("span", { "data-testid": "run-state" }, text), r.runId ? h("span", { class: "muted mono" }, shortId(r.runId)) : null,
          h("button", { type: "button", class: "btn link", "aria-label": "Dismiss", onclick: () => { S.lastRun = null; renderLive(); } }, "✕"))));
    } else clear(liveSlot);
    syncButtons();
  }

  // ---- mount ------------------------------------------------------------------------------
  A.assistants().then((as) => {
    S.graphs = (as || []).slice().sort((x, y) => (x.graph_id < y.graph_id ? -1 : 1));
    const want = graphId();
    for (const a of S.graphs) asSel.append(h("option", { value: a.graph_id }, a.graph_id));
    if (want) asSel.value = want;
    syncButtons();
  }).catch(() => {});
  asSel.addEventListener("change", async () => {
    S.schema = await schemaOf(asSel.value);
    hintFields();
  });
  function hintFields() {
    const p = S.schema && S.schema.input_schema && S.schema.input_schema.properties;
    runHint.textContent = p ? `Input fields: ${Object.keys(p).join(", ") || "none"}` : "";
  }

  clear(detail, h("p", { class: "muted" }, "Loading…"));
  loadFirst().then(() => {
    if (S.destroyed) return;
    if (graphId()) asSel.value = graphId();
    hintFields();
    setView(S.view);
    renderAll();
    watchBusy();
  }).catch((e) => {
    clear(detail, h("div", { class: "card error", "data-testid": "thread-error" }, e.status === 404 ? `No thread ${S.id}.` : `Could not load the thread: ${e.message}`));
  });

  function toast(msg) { document.dispatchEvent(new CustomEvent("sst-toast", { detail: msg })); }

  return {
    id: threadId,
    update(cp) {
      S.sel = cp || null;
      S.forkOpen = false;
      if (S.view !== "timeline") setView("timeline");
      const items = [...tl.querySelectorAll("a.cp-row")];
      const selId = cpid(selectedCp() || {}) || null;
      for (const it of items) {
        const on = it.dataset.checkpointId === selId;
        if (on) it.setAttribute("aria-current", "true"); else it.removeAttribute("aria-current");
      }
      renderDetail();
    },
    setView,
    destroy() {
      S.destroyed = true;
      clearTimeout(S.poll);
      io.disconnect();
      if (S.live) S.live.ctrl.abort();
    },
  };
}
