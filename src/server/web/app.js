// The page of `superstep serve`: hash routes #/threads, #/threads/<id>,
// #/threads/<id>/<checkpoint_id>; the sign-in form; notices.
import { h, clear } from "./ui.js";
import * as A from "./api.js";
import { mountThreads } from "./threads.js";
import { mountThread } from "./thread.js";

const main = document.getElementById("main");
const toasts = document.getElementById("toasts");
let view = null; // {kind, id, handle}

// ---- notices ------------------------------------------------------------------------------
function toast(msg) {
  const t = h("div", { class: "toast", role: "alert", "data-testid": "toast" }, h("span", null, msg),
    h("button", { type: "button", class: "btn link", "aria-label": "Dismiss", onclick: () => t.remove() }, "✕"));
  toasts.append(t);
  setTimeout(() => t.remove(), 8000);
}
document.addEventListener("sst-toast", (e) => toast(e.detail));
window.addEventListener("unhandledrejection", (e) => {
  const r = e.reason;
  if (r instanceof A.ApiError) { e.preventDefault(); toast(r.message); }
});

// ---- sign in ---------------------------------------------------------------------------------
const dlg = document.getElementById("auth");
const authForm = document.getElementById("auth-form");
const authInput = document.getElementById("auth-token");
const authMsg = document.getElementById("auth-msg");
let authDone = null;
authForm.addEventListener("submit", (e) => {
  e.preventDefault();
  const t = authInput.value.trim();
  if (!t) return;
  A.setToken(t);
  authInput.value = "";
  dlg.close();
  updateSignOut();
  if (authDone) { authDone(); authDone = null; }
});
dlg.addEventListener("cancel", (e) => e.preventDefault()); // the page cannot go on without it
A.onAuthNeeded((msg) => new Promise((resolve) => {
  authMsg.textContent = msg;
  authDone = resolve;
  if (!dlg.open) dlg.showModal();
  authInput.focus();
}));

const signOut = document.getElementById("sign-out");
function updateSignOut() { signOut.hidden = !A.token(); }
signOut.addEventListener("click", () => { A.setToken(null); updateSignOut(); location.reload(); });
updateSignOut();

// ---- routes ------------------------------------------------------------------------------------
function parse() {
  const hash = location.hash.replace(/^#/, "") || "/threads";
  const q = hash.indexOf("?");
  const path = q < 0 ? hash : hash.slice(0, q);
  const params = new URLSearchParams(q < 0 ? "" : hash.slice(q + 1));
  const parts = path.split("/").filter(Boolean).map((p) => { try { return decodeURIComponent(p); } catch { return p; } });
  return { parts, params };
}

function route() {
  const { parts, params } = parse();
  if (parts[0] === "threads" && parts[1]) {
    const [, id, cp] = parts;
    if (view && view.kind === "thread" && view.id === id) {
      view.handle.update(cp || null);
      return;
    }
    swap("thread", id, (root) => mountThread(root, id, cp || null));
  } else {
    const key = params.toString();
    swap("threads", key, (root) => mountThreads(root, params));
  }
}

function swap(kind, id, mount) {
  const hadFocus = main.contains(document.activeElement);
  if (view) view.handle.destroy();
  clear(main);
  view = { kind, id, handle: mount(main) };
  window.scrollTo(0, 0);
  if (hadFocus || kind === "thread") main.focus({ preventScroll: true });
}

window.addEventListener("hashchange", route);
route();
