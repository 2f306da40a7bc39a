// Messages as chat bubbles: OpenAI-style {role, content, tool_calls:
// [{id, function: {name, arguments}}]} and LangChain-style {type, content,
// tool_calls: [{id, name, args}]} alike. Tool results fold under their call.
import { h, icon, jsonTree, brief } from "./ui.js";

const ROLES = { user: "user", human: "user", assistant: "assistant", ai: "assistant", AIMessageChunk: "assistant", tool: "tool", system: "system", developer: "system" };
const LABEL = { user: "You", assistant: "Assistant", tool: "Tool", system: "System" };
const ICON = { user: "user", assistant: "bot", tool: "tool", system: "system" };

export const roleOf = (m) => ROLES[m && (m.role || m.type)] || "assistant";

export function textOf(m) {
  const c = m && m.content;
  if (c == null) return "";
  if (typeof c === "string") return c;
  if (Array.isArray(c)) return c.map((p) => (typeof p === "string" ? p : p && p.type === "text" ? p.text : brief(p))).join("");
  return brief(c, 2000);
}

// [{id, name, args, raw}] of an AI message.
export function toolCalls(m) {
  const calls = (m && Array.isArray(m.tool_calls) && m.tool_calls) || [];
  return calls.map((c) => {
    let args = c.args;
    if (args === undefined && c.function) {
      try { args = JSON.parse(c.function.arguments || "{}"); } catch { args = c.function.arguments; }
    }
    return { id: c.id, name: c.name || (c.function && c.function.name) || "tool", args: args === undefined ? {} : args, raw: c };
  });
}

// The call with new args, in the shape it came in.
export function withArgs(call, args) {
  const raw = call.raw;
  if (raw.function && raw.args === undefined) return { ...raw, function: { ...raw.function, arguments: JSON.stringify(args) } };
  return { ...raw, args };
}

function argsText(args) {
  if (args && typeof args === "object" && !Array.isArray(args)) {
    return Object.keys(args).map((k) => `${k}: ${brief(args[k], 40)}`).join(", ");
  }
  return brief(args, 60);
}

// The bubbles of msgs (a list). pending: ids of tool calls waiting for
// approval. Returns {el, texts}: texts maps a message id to the element its
// streamed tokens go into.
export function renderMessages(msgs, { pending = new Set() } = {}) {
  const results = new Map();
  for (const m of msgs) if (roleOf(m) === "tool" && m.tool_call_id != null) results.set(m.tool_call_id, m);
  const callIds = new Set();
  for (const m of msgs) for (const c of toolCalls(m)) callIds.add(c.id);
  const texts = new Map();
  const list = h("ol", { class: "bubbles", "aria-label": "Messages" });
  for (const m of msgs) {
    const role = roleOf(m);
    if (role === "tool" && callIds.has(m.tool_call_id)) continue; // shown under its call
    const text = textOf(m);
    const body = h("div", { class: "msg-text" }, text);
    if (m.id != null) texts.set(String(m.id), body);
    const calls = toolCalls(m).map((c) => {
      const res = results.get(c.id);
      const state = res ? (/^rejected/i.test(textOf(res)) ? "rejected" : "done") : pending.has(c.id) ? "pending" : "running";
      const label = { done: "✓ result", rejected: "✕ rejected", pending: "awaiting approval", running: "… no result yet" }[state];
      return h("details", { class: `tool-call tc-${state}`, "data-testid": "tool-call", "data-tool": c.name, "data-state": state },
        h("summary", null, icon("tool"), " ", h("span", { class: "tc-name" }, `${c.name}(${argsText(c.args)})`), " ", h("span", { class: "tc-state" }, state === "pending" ? [icon("pause"), " "] : null, label)),
        h("div", { class: "tc-body" },
          h("div", { class: "tc-label" }, "Arguments"), jsonTree(c.args, { open: 3 }),
          res ? [h("div", { class: "tc-label" }, "Result"), h("pre", { class: "tc-result", "data-testid": "tool-result" }, textOf(res))] : null));
    });
    list.append(h("li", { class: `msg msg-${role}${m.__streaming ? " streaming" : ""}`, "data-testid": "chat-msg", "data-role": role, "data-message-id": m.id == null ? null : String(m.id) },
      h("div", { class: "msg-role" }, icon(ICON[role]), " ", role === "tool" && m.name ? `Tool ${m.name}` : LABEL[role]),
      text || !calls.length ? body : null, calls));
  }
  if (!msgs.length) list.append(h("li", { class: "empty" }, "No messages yet. Say something below."));
  return { el: list, texts };
}
