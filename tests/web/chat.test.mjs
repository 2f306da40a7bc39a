// The chat view: bubbles by role, tool calls with their results folded under
// them, tokens appearing as they stream (messages-tuple); approving, editing
// and rejecting the tool calls of an agent compiled with interrupt_before = {"tools"}.
import { assert } from "./_lib.mjs";

const bubbles = (t) => t.page.$$eval("[data-testid=chat-msg]", (els) => els.map((e) => ({
  role: e.dataset.role, id: e.dataset.messageId,
  text: (e.querySelector(".msg-text") || { textContent: "" }).textContent,
  calls: [...e.querySelectorAll("[data-testid=tool-call]")].map((c) => ({ tool: c.dataset.tool, state: c.dataset.state, summary: c.querySelector("summary").textContent, result: (c.querySelector("[data-testid=tool-result]") || { textContent: null }).textContent })),
})));

async function openChat(t, id) {
  await t.goto(`#/threads/${id}`);
  await t.waitFor(() => !document.querySelector("[data-testid=view-chat]").hidden);
  await t.click("[data-testid=view-chat]");
  await t.page.waitForSelector("[data-testid=chat-input]", { visible: true });
}

async function send(t, text) {
  await t.type("[data-testid=chat-input]", text);
  await t.waitFor(() => !document.querySelector("[data-testid=chat-send]").disabled);
  await t.click("[data-testid=chat-send]");
}

export const tests = [
  {
    name: "chat view: bubbles, folded tool calls, streamed tokens",
    shot: "chat",
    async run(t) {
      const id = await t.thread("chat");
      await openChat(t, id);
      // Record every piece of text added to a bubble after it was drawn.
      await t.page.evaluate(() => {
        window.__tokens = [];
        new MutationObserver((recs) => {
          for (const r of recs) for (const n of r.addedNodes) {
            if (n.nodeType === 3 && n.parentElement && n.parentElement.classList.contains("msg-text")) {
              window.__tokens.push({ id: n.parentElement.closest("[data-testid=chat-msg]").dataset.messageId, text: n.data });
            }
          }
        }).observe(document.querySelector("[data-testid=chat]"), { subtree: true, childList: true });
      });
      await send(t, "What is 2+40?");
      await t.waitText("[data-testid=run-state]", "Run finished");
      await t.waitFor(() => [...document.querySelectorAll("[data-testid=chat-msg]")].some((e) => e.textContent.includes("The answer is 42.")));
      const msgs = await bubbles(t);
      assert.deepEqual(msgs.map((m) => m.role), ["user", "assistant", "assistant"], "the tool's message is folded under its call");
      assert.equal(msgs[0].text, "What is 2+40?");
      assert.equal(msgs[1].text, "Let me add them up.");
      assert.equal(msgs[1].calls.length, 1);
      assert.match(msgs[1].calls[0].summary, /add\(a: 2, b: 40\)/);
      assert.equal(msgs[1].calls[0].state, "done");
      assert.equal(msgs[1].calls[0].result, "42");
      assert.equal(msgs[2].text, "The answer is 42.");
      // The tokens: each reply's words went into its bubble one by one.
      const tokens = await t.page.evaluate(() => window.__tokens);
      const final = tokens.filter((x) => x.id === msgs[2].id).map((x) => x.text);
      assert.ok(final.length >= 2, `tokens streamed into the final reply: ${JSON.stringify(tokens)}`);
      assert.ok("The answer is 42.".endsWith(final.join("")), `the streamed pieces are the reply's end: ${JSON.stringify(final)}`);
      // The folded call opens to its arguments and result.
      await t.page.click("[data-testid=tool-call] summary");
      assert.match(await t.text("[data-testid=tool-call]"), /Arguments.*a: 2.*b: 40.*Result\s*42/s);
      await t.shot("chat");
      // The timeline behind it has the run's checkpoints.
      await t.click("[data-testid=view-timeline]");
      assert.ok((await t.rows()).length >= 4);
    },
  },
  {
    name: "tool calls: approve (through the chat composer), edit, reject",
    shot: "approvals",
    async run(t) {
      // Approve: the whole exchange from the page.
      const a = await t.thread("agent");
      await openChat(t, a);
      await send(t, "2+40");
      await t.waitText("[data-testid=run-state]", /paused/);
      await t.waitText("[data-testid=approvals]", /1 tool call waiting for approval before tools/);
      let msgs = await bubbles(t);
      assert.equal(msgs[1].calls[0].state, "pending");
      assert.match(msgs[1].calls[0].summary, /awaiting approval/);
      assert.ok(await t.page.$eval("[data-testid=edit-button]", (b) => b.disabled), "nothing edited yet");
      await t.shot("approvals");
      await t.click("[data-testid=approve-button]");
      await t.waitText("[data-testid=run-state]", "Run finished");
      await t.waitFor(() => document.querySelector("[data-testid=chat]").textContent.includes("The tool said: 42."));
      msgs = await bubbles(t);
      assert.equal(msgs[1].calls[0].result, "42");
      assert.equal(await t.page.$("[data-testid=approvals]"), null);

      // Edit: the AI message is replaced (same id) with the new arguments, then the run goes on.
      const e = await t.thread("agent", { messages: [{ role: "user", content: "2+40" }] });
      const before = await t.state(e);
      await openChat(t, e);
      await t.page.waitForSelector("[data-testid=approvals]");
      await t.type("[data-testid=tool-args]", '{"a": 5, "b": }');
      await t.waitText("[data-testid=tool-args-error]", /line 1, column 15/);
      assert.ok(await t.page.$eval("[data-testid=edit-button]", (b) => b.disabled));
      await t.type("[data-testid=tool-args]", '{"a": 5, "b": 5}');
      await t.waitFor(() => !document.querySelector("[data-testid=edit-button]").disabled);
      await t.click("[data-testid=edit-button]");
      await t.waitText("[data-testid=run-state]", "Run finished");
      await t.waitFor(() => document.querySelector("[data-testid=chat]").textContent.includes("The tool said: 10."));
      const after = await t.state(e);
      assert.equal(after.values.messages.length, 4);
      assert.equal(after.values.messages[1].id, before.values.messages[1].id, "the same AI message, edited");
      assert.deepEqual(after.values.messages[1].tool_calls[0].args, { a: 5, b: 5 });
      assert.match((await bubbles(t))[1].calls[0].summary, /add\(a: 5, b: 5\)/);

      // Reject: a ToolMessage per call as the tools node, then the run goes on.
      const r = await t.thread("agent", { messages: [{ role: "user", content: "1+1" }] });
      await openChat(t, r);
      await t.click("[data-testid=reject-button]");
      await t.waitText("[data-testid=run-state]", "Run finished");
      await t.waitFor(() => document.querySelector("[data-testid=chat]").textContent.includes("The tool said: Rejected by the user"));
      msgs = await bubbles(t);
      assert.equal(msgs[1].calls[0].state, "rejected");
      const st = await t.state(r);
      const tool = st.values.messages[2];
      assert.equal(tool.role, "tool");
      assert.equal(tool.tool_call_id, st.values.messages[1].tool_calls[0].id);
      const hist = await t.history(r);
      assert.ok(hist.some((c) => c.metadata.source === "update"), "the rejection is an update_state checkpoint");
    },
  },
];
