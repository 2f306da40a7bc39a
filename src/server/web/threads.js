// #/threads?q=...&status=...&page=N: the threads, newest update first, one
// page at a time (POST /threads/search with limit/offset, POST /threads/count).
import { h, clear, statusBadge, timeEl, rovingList, focusItem } from "./ui.js";
import * as A from "./api.js";

const PAGE = 50;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const HIDDEN_META = new Set(["graph_id", "assistant_id"]);

// The search box: a thread id, or key=value metadata filters (values parsed
// as JSON when they are: n=3 is a number, ok=true a boolean).
export function parseQuery(q) {
  q = (q || "").trim();
  if (!q) return { filter: {} };
  if (UUID.test(q)) return { filter: { ids: [q.toLowerCase()] } };
  const metadata = {};
  for (const part of q.match(/(?:[^\s"]+|"[^"]*")+/g) || []) {
    const eq = part.indexOf("=");
    if (eq <= 0) return { error: `"${part}" is neither a thread id nor key=value` };
    const k = part.slice(0, eq);
    let v = part.slice(eq + 1);
    try { v = JSON.parse(v); } catch { /* a plain string */ }
    metadata[k] = v;
  }
  return { filter: { metadata } };
}

export function hashFor({ q = "", status = "", page = 0 }) {
  const p = new URLSearchParams();
  if (q) p.set("q", q);
  if (status) p.set("status", status);
  if (page) p.set("page", String(page + 1));
  const s = p.toString();
  return "#/threads" + (s ? "?" + s : "");
}

export function mountThreads(root, params) {
  const st = { q: params.get("q") || "", status: params.get("status") || "", page: Math.max(0, (Number(params.get("page")) || 1) - 1) };
  const go = (patch) => { location.hash = hashFor({ ...st, ...patch }); };

  const search = h("input", { type: "search", id: "threads-q", "data-testid": "threads-search", placeholder: "thread id, or key=value …", autocomplete: "off", "aria-describedby": "threads-q-hint" });
  search.value = st.q;
  const statusSel = h("select", { id: "threads-status", "data-testid": "threads-status" },
    ["", "idle", "busy", "interrupted", "error"].map((s) => h("option", { value: s }, s || "any status")));
  statusSel.value = st.status;
  const form = h("form", { class: "toolbar", role: "search", onsubmit: (e) => { e.preventDefault(); go({ q: search.value.trim(), page: 0 }); } },
    h("label", { for: "threads-q", class: "sr-only" }, "Search threads"), search,
    h("label", { for: "threads-status", class: "sr-only" }, "Status"), statusSel,
    h("button", { type: "submit", class: "btn" }, "Search"));
  statusSel.addEventListener("change", () => go({ status: statusSel.value, page: 0, q: search.value.trim() }));

  const hint = h("div", { id: "threads-q-hint", class: "hint", "data-testid": "threads-hint" }, "Search by an exact thread id, or filter on metadata with key=value (several: a=1 b=x).");
  const list = h("ul", { class: "tlist", "data-testid": "threads-list", "aria-label": "Threads" });
  const range = h("span", { class: "muted", "data-testid": "threads-range", "aria-live": "polite" });
  const prev = h("button", { type: "button", class: "btn", "data-testid": "threads-prev", onclick: () => go({ page: st.page - 1 }) }, "← Newer");
  const next = h("button", { type: "button", class: "btn", "data-testid": "threads-next", onclick: () => go({ page: st.page + 1 }) }, "Older →");
  const pager = h("nav", { class: "pager", "aria-label": "Pages" }, prev, range, next);

  const graphSel = h("select", { "data-testid": "new-thread-graph", "aria-label": "Graph for the new thread" });
  const newBtn = h("button", { type: "button", class: "btn primary", "data-testid": "new-thread", onclick: newThread }, "New thread");
  A.assistants().then((as) => {
    for (const a of (as || []).slice().sort((x, y) => (x.graph_id < y.graph_id ? -1 : 1))) graphSel.append(h("option", { value: a.graph_id }, a.graph_id));
  }).catch(() => {});

  clear(root,
    h("section", { class: "page threads-page", "aria-labelledby": "threads-h" },
      h("div", { class: "page-head" }, h("h1", { id: "threads-h" }, "Threads"),
        h("div", { class: "new-thread" }, graphSel, newBtn)),
      form, hint, list, pager));
  rovingList(list, "a.trow");
  list.addEventListener("keydown", (e) => {
    if (e.key === "PageDown" && !next.disabled) { e.preventDefault(); next.click(); }
    if (e.key === "PageUp" && !prev.disabled) { e.preventDefault(); prev.click(); }
  });

  async function newThread() {
    newBtn.disabled = true;
    try {
      const t = await A.createThread({ metadata: graphSel.value ? { graph_id: graphSel.value } : {} });
      location.hash = `#/threads/${encodeURIComponent(t.thread_id)}`;
    } catch (e) {
      hint.textContent = `Could not create a thread: ${e.message}`;
    } finally { newBtn.disabled = false; }
  }

  async function load() {
    const pq = parseQuery(st.q);
    prev.disabled = next.disabled = true;
    if (pq.error) {
      hint.textContent = pq.error + ". Search by an exact thread id, or key=value metadata filters.";
      hint.classList.add("error");
      clear(list);
      range.textContent = "";
      return;
    }
    const filter = { ...pq.filter };
    if (st.status) filter.status = st.status;
    list.setAttribute("aria-busy", "true");
    if (filter.ids) { // an exact id: one GET, not a search over every thread
      try {
        const th = await A.getThread(filter.ids[0]).catch((e) => { if (e.status === 404) return null; throw e; });
        const rows = th && (!st.status || th.status === st.status) ? [th] : [];
        render(rows, rows.length, true);
      } catch (e) {
        clear(list, h("li", { class: "empty error" }, `Could not read the thread: ${e.message}`));
      } finally {
        list.removeAttribute("aria-busy");
      }
      return;
    }
    try {
      // The rows show as soon as they come; the total (a count over all threads) is asked after.
      const rows = (await A.searchThreads({ ...filter, limit: PAGE, offset: st.page * PAGE, sort_by: "updated_at", sort_order: "desc", select: ["thread_id", "status", "metadata", "created_at", "updated_at"] })) || [];
      render(rows, null, true);
      const total = await A.countThreads(filter).then((n) => (typeof n === "number" ? n : null), () => null);
      render(rows, total, false);
    } catch (e) {
      clear(list, h("li", { class: "empty error" }, `Could not list threads: ${e.message}`));
    } finally {
      list.removeAttribute("aria-busy");
    }
  }

  function render(rows, total, drawRows) {
    if (drawRows) {
      const frag = document.createDocumentFragment();
      rows.forEach((t, i) => frag.append(row(t, i === 0)));
      if (!rows.length) frag.append(h("li", { class: "empty" }, st.q || st.status ? "No thread matches." : "No threads yet."));
      clear(list, frag);
    }
    const from = st.page * PAGE;
    range.textContent = rows.length
      ? `${(from + 1).toLocaleString()}–${(from + rows.length).toLocaleString()}${total != null ? " of " + total.toLocaleString() : ""}`
      : total != null ? `0 of ${total.toLocaleString()}` : "";
    prev.disabled = st.page === 0;
    next.disabled = total != null ? from + rows.length >= total : rows.length < PAGE;
    document.title = "Threads · superstep";
  }

  function row(t, first) {
    const meta = t.metadata || {};
    const chips = Object.keys(meta).filter((k) => !HIDDEN_META.has(k)).slice(0, 6)
      .map((k) => h("span", { class: "chip" }, h("span", { class: "chip-k" }, k), "=", typeof meta[k] === "string" ? meta[k] : JSON.stringify(meta[k])));
    const href = `#/threads/${encodeURIComponent(t.thread_id)}`;
    return h("li", null,
      h("a", { class: "trow", href, tabindex: first ? "0" : "-1", "data-testid": "thread-row", "data-thread-id": t.thread_id, "data-status": t.status },
        h("span", { class: "c-status" }, statusBadge(t.status)),
        h("span", { class: "c-id mono", title: t.thread_id }, t.thread_id),
        h("span", { class: "c-graph" }, meta.graph_id ? String(meta.graph_id) : h("span", { class: "muted" }, "no graph")),
        h("span", { class: "c-time" }, timeEl(t.updated_at)),
        h("span", { class: "c-meta" }, chips)));
  }

  load();
  return {
    focus() {
      const items = [...list.querySelectorAll("a.trow")];
      if (items.length) focusItem(items, 0);
    },
    destroy() {},
  };
}
