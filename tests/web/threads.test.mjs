// The threads list: search (an id, key=value metadata), the status filter,
// pages of 50, keyboard navigation.
import { assert } from "./_lib.mjs";

const rowsOf = (t) => t.page.$$eval("[data-testid=thread-row]", (els) => els.map((e) => ({ id: e.dataset.threadId, status: e.dataset.status, text: e.textContent })));
const listed = (t) => t.waitFor(() => !document.querySelector("[data-testid=threads-list][aria-busy]") && document.querySelector("[data-testid=threads-list] > li") !== null);

export const tests = [
  {
    name: "list, status filter, metadata and id search, paging",
    shot: "threads",
    async run(t) {
      const batch = `b${Date.now()}`;
      // 120 idle threads, 3 interrupted (approval), 1 failed (flaky), all in this batch.
      await Promise.all(Array.from({ length: 120 }, (_, i) => t.api("POST", "/threads", { metadata: { batch, i, graph_id: "chain" } })));
      const interrupted = [];
      for (let i = 0; i < 3; i++) interrupted.push(await t.thread("approval", { topic: `t${i}` }, { batch, kind: "approval" }));
      const failed = await t.thread("flaky", { why: "on purpose" }, { batch, kind: "flaky" });

      await t.goto("#/threads");
      await listed(t);
      assert.ok((await rowsOf(t)).length > 0, "the list shows threads");
      await t.type("[data-testid=threads-search]", `batch=${batch}`);
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=threads-range]", "1–50 of 124");
      let rows = await rowsOf(t);
      assert.equal(rows.length, 50);
      // Newest update first: the failed and the interrupted threads were updated last.
      assert.equal(rows[0].id, failed);
      assert.equal(rows[0].status, "error");
      assert.match(rows[0].text, /error/, "the status has a text label");
      assert.match(rows[0].text, /flaky/, "the graph is shown");
      assert.match(rows[0].text, /kind=flaky/, "the metadata is shown");
      assert.ok(await t.page.$eval("[data-testid=threads-prev]", (b) => b.disabled), "no newer page");

      await t.click("[data-testid=threads-next]");
      await t.waitText("[data-testid=threads-range]", "51–100 of 124");
      assert.match(await t.page.evaluate(() => location.hash), /page=2/);
      await t.click("[data-testid=threads-next]");
      await t.waitText("[data-testid=threads-range]", "101–124 of 124");
      assert.equal((await rowsOf(t)).length, 24);
      assert.ok(await t.page.$eval("[data-testid=threads-next]", (b) => b.disabled), "no older page");
      await t.page.goBack();
      await t.waitText("[data-testid=threads-range]", "51–100 of 124");

      // Status filter (with the metadata filter kept).
      await t.page.select("[data-testid=threads-status]", "interrupted");
      await t.waitText("[data-testid=threads-range]", "1–3 of 3");
      rows = await rowsOf(t);
      assert.deepEqual(rows.map((r) => r.status), ["interrupted", "interrupted", "interrupted"]);
      assert.deepEqual(rows.map((r) => r.id).sort(), interrupted.slice().sort());
      await t.page.select("[data-testid=threads-status]", "error");
      await t.waitText("[data-testid=threads-range]", "1–1 of 1");
      assert.equal((await rowsOf(t))[0].id, failed);

      // Two metadata filters, a number parsed as JSON.
      await t.page.select("[data-testid=threads-status]", "");
      await t.type("[data-testid=threads-search]", `batch=${batch} i=7`);
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=threads-range]", "1–1 of 1");
      assert.match((await rowsOf(t))[0].text, /i=7/);

      // An exact thread id.
      await t.type("[data-testid=threads-search]", interrupted[1]);
      await t.page.keyboard.press("Enter");
      // The range already reads 1–1 from the search before: wait for the rows themselves.
      await t.waitFor((id) => {
        const rows = document.querySelectorAll("[data-testid=thread-row]");
        return rows.length === 1 && rows[0].dataset.threadId === id;
      }, interrupted[1]);
      await t.waitText("[data-testid=threads-range]", "1–1");
      rows = await rowsOf(t);
      assert.deepEqual(rows.map((r) => r.id), [interrupted[1]]);

      // Neither an id nor key=value: said so, nothing listed.
      await t.type("[data-testid=threads-search]", "hello");
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=threads-hint]", /neither a thread id nor key=value/);
      assert.equal((await rowsOf(t)).length, 0);

      await t.type("[data-testid=threads-search]", `batch=${batch}`);
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=threads-range]", "1–50 of 124");
      await t.shot("threads");

      // New thread: created for the chosen graph, opened with the run form ready.
      await t.page.select("[data-testid=new-thread-graph]", "chain");
      await t.click("[data-testid=new-thread]");
      await t.waitFor(() => /^#\/threads\/[0-9a-f-]{36}$/.test(location.hash));
      await t.page.waitForSelector("[data-testid=run-card][open]");
      assert.equal(await t.text("[data-testid=thread-graph]"), "chain");
      await t.waitFor(() => document.querySelector("[data-testid=run-assistant]").value === "chain");
    },
  },
  {
    name: "keyboard: arrows move through the list, Enter opens, timeline arrows, Back",
    shot: "keyboard",
    async run(t) {
      const tag = `k${Date.now()}`;
      const ids = [];
      for (let i = 0; i < 3; i++) ids.push(await t.thread("chain", { items: [`k${i}`] }, { tag }));
      await t.goto(`#/threads?q=tag%3D${tag}`);
      await t.waitText("[data-testid=threads-range]", "1–3 of 3");
      // Tab from the search field reaches the list; one row is in the tab order.
      assert.equal(await t.page.$$eval("a.trow[tabindex='0']", (e) => e.length), 1);
      await t.page.focus("a.trow[tabindex='0']");
      await t.page.keyboard.press("ArrowDown");
      await t.page.keyboard.press("ArrowDown");
      const focused = await t.page.evaluate(() => document.activeElement.dataset.threadId);
      assert.equal(focused, ids[0], "the third row (oldest) has the focus");
      const outline = await t.page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
      assert.notEqual(outline, "none", "the focused row shows a focus ring");
      await t.page.keyboard.press("ArrowUp");
      assert.equal(await t.page.evaluate(() => document.activeElement.dataset.threadId), ids[1]);
      await t.page.keyboard.press("Enter");
      await t.waitFor((id) => location.hash === `#/threads/${id}`, ids[1]);
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length === 5);

      // The timeline: the selected (head) row is in the tab order; arrows, then Enter selects.
      await t.page.focus("a.cp-row[tabindex='0']");
      await t.page.keyboard.press("ArrowDown");
      await t.page.keyboard.press("ArrowDown");
      const cp = await t.page.evaluate(() => document.activeElement.dataset.checkpointId);
      const step = await t.page.evaluate(() => document.activeElement.dataset.step);
      assert.equal(step, "1");
      await t.page.keyboard.press("Enter");
      await t.waitFor((id) => location.hash.endsWith(id) && document.querySelector(`[data-checkpoint-id="${id}"]`).getAttribute("aria-current") === "true", cp);
      await t.waitText("[data-testid=detail-title]", /Step 1/);
      await t.waitFor(() => document.activeElement && document.activeElement.classList.contains("cp-row"));
      await t.page.keyboard.press("End");
      assert.equal(await t.page.evaluate(() => document.activeElement.dataset.step), "-1");
      await t.shot("keyboard");
      // Back: the head again, then the list.
      await t.page.goBack();
      await t.waitText("[data-testid=detail-title]", /Step 3/);
      await t.page.goBack();
      await t.waitText("[data-testid=threads-range]", "1–3 of 3");
    },
  },
];
