// A 390x844 phone: the list and the detail stack, nothing overflows
// horizontally (threads list, thread with its timeline and detail, chat, the
// run form, the approval form).
import { assert } from "./_lib.mjs";

async function phone(t) {
  await t.page.setViewport({ width: 390, height: 844, isMobile: true, hasTouch: true, deviceScaleFactor: 2 });
}
async function noOverflow(t, where) {
  const o = await t.overflow();
  assert.deepEqual(o, [], `${where}: wider than the screen`);
}

export const tests = [
  {
    name: "phone width: threads list, thread, chat, forms fit in 390 px",
    shot: "phone",
    async run(t) {
      const tag = `p${Date.now()}`;
      const r = await t.thread("research", { topic: "a rather long topic name to wrap across the narrow screen of a phone" }, { tag, owner: "someone-with-a-long-name@example.com", note: "x".repeat(120) });
      const a = await t.thread("agent", { messages: [{ role: "user", content: "2+40 " + "word ".repeat(60) }] }, { tag });
      await phone(t);
      await t.goto(`#/threads?q=tag%3D${tag}`);
      await t.waitText("[data-testid=threads-range]", "1–2 of 2");
      await noOverflow(t, "threads list");
      await t.shot("phone-threads");

      await t.openThread(r);
      await t.waitFor(() => document.querySelector("[data-testid=graph] svg g.node"));
      // Stacked: the timeline above the checkpoint, each the full width.
      const boxes = await t.page.evaluate(() => {
        const b = (s) => { const r = document.querySelector(s).getBoundingClientRect(); return { top: r.top, bottom: r.bottom, width: r.width }; };
        return { tl: b(".timeline-card"), detail: b("[data-testid=checkpoint-detail]"), w: document.documentElement.clientWidth };
      });
      assert.ok(boxes.detail.top >= boxes.tl.bottom - 1, `the detail comes below the timeline: ${JSON.stringify(boxes)}`);
      assert.ok(boxes.tl.width > boxes.w * 0.85 && boxes.detail.width > boxes.w * 0.85, "both use the width");
      await noOverflow(t, "thread");
      await t.page.$eval("[data-testid=run-card]", (d) => { d.open = true; });
      await t.click("[data-testid=fork-open]");
      await noOverflow(t, "thread with the run form and the fork editor open");
      await t.shot("phone");

      await t.openThread(a);
      await t.click("[data-testid=view-chat]");
      await t.page.waitForSelector("[data-testid=approvals]");
      await t.page.click("[data-testid=tool-call] summary");
      await noOverflow(t, "chat with a pending tool call");
      // In the chat view the conversation comes first.
      const order = await t.page.evaluate(() => document.querySelector("[data-testid=chat]").getBoundingClientRect().top < document.querySelector(".timeline-card").getBoundingClientRect().top);
      assert.ok(order, "on a phone the chat is above the timeline");
      await t.shot("phone-chat");
    },
  },
];
