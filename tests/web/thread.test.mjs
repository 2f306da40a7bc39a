// A thread: the timeline, selecting checkpoints, the diff against the parent,
// the state tree, tasks with errors and interrupts, the graph with its nodes
// highlighted, deep links; and README's screenshot (thread.png).
import { assert } from "./_lib.mjs";

const diffRows = (t) => t.page.$$eval("[data-testid=diff-row]", (els) => els.map((e) => ({ kind: e.dataset.kind, path: e.dataset.path, text: e.textContent })));
const highlighted = (t) => t.page.$$eval("[data-testid=graph] g.node", (els) => Object.fromEntries(els.filter((e) => /hl-/.test(e.getAttribute("class"))).map((e) => [e.dataset.node, e.getAttribute("class").split(" ").filter((c) => c.startsWith("hl-")).sort().join(" ")])));
const graphDrawn = (t) => t.waitFor(() => document.querySelector("[data-testid=graph] svg g.node") !== null);

export const tests = [
  {
    name: "timeline, checkpoint selection, diff, state, graph highlights, deep link",
    shot: "thread-select",
    async run(t) {
      const id = await t.thread("research", { topic: "durable graphs" }, { owner: "ana", project: "docs" });
      await t.api("POST", `/threads/${id}/runs/wait`, { assistant_id: "research", command: { resume: "yes" } });
      const hist = await t.history(id);
      await t.openThread(id);

      const rows = await t.rows();
      assert.deepEqual(rows.map((r) => r.id), hist.map((c) => c.checkpoint.checkpoint_id), "the timeline lists the history, newest first");
      assert.deepEqual(rows.map((r) => r.step), hist.map((c) => c.metadata.step));
      assert.equal(rows[0].current, true, "the head is selected");
      assert.match(rows[0].text, /head/);
      assert.equal(await t.page.$eval("[data-testid=thread-status]", (e) => e.dataset.status), "idle");
      assert.match(await t.text("[data-testid=thread-header]"), /owner=ana/);
      // Who wrote each checkpoint: the tasks of its parent that have a result.
      const byStep = Object.fromEntries(rows.map((r) => [r.step, r.text]));
      assert.match(byStep[1], /wrote fetch, plan|wrote plan, fetch/);
      assert.match(byStep[2], /wrote research/);
      assert.match(byStep[-1], /input/);

      // Step 2: research appended three notes; approve is next (and was interrupted there).
      const s2 = rows.find((r) => r.step === 2);
      await t.click(`[data-checkpoint-id="${s2.id}"]`);
      await t.waitFor((cp) => location.hash.endsWith(cp), s2.id);
      await t.waitText("[data-testid=detail-title]", /Step 2/);
      assert.equal(await t.text("[data-testid=detail-checkpoint-id]"), s2.id);
      let diff = await diffRows(t);
      assert.deepEqual(diff.map((d) => [d.kind, d.path]), [["appended", "notes"]]);
      assert.match(diff[0].text, /3 items/);
      assert.match(diff[0].text, /notes on durable graphs: history/);
      await graphDrawn(t);
      let hl = await highlighted(t);
      assert.equal(hl.approve, "hl-interrupted hl-next", "approve is next, and its task was interrupted");
      assert.match(await t.text("[data-testid=graph-legend]"), /next\s*approve/);
      assert.match(await t.text("[data-testid=graph-legend]"), /interrupted\s*approve/);
      const names = await t.page.$$eval("[data-testid=graph] g.node", (els) => els.map((e) => e.dataset.node));
      for (const n of ["__start__", "plan", "research", "fetch", "approve", "report", "__end__"]) assert.ok(names.includes(n), `node ${n} drawn`);
      // The tasks: approve interrupted with its value, and what it wrote after the resume.
      const task = await t.text("[data-testid=task][data-node=approve]");
      assert.match(task, /interrupted/);
      assert.match(task, /publish the report\?/);
      await t.shot("thread-select");

      // Step 1: plan and fetch ran in parallel; research x3 next (one node).
      const s1 = rows.find((r) => r.step === 1);
      await t.click(`[data-checkpoint-id="${s1.id}"]`);
      await t.waitText("[data-testid=detail-title]", /Step 1/);
      diff = await diffRows(t);
      assert.deepEqual(diff.map((d) => [d.kind, d.path]).sort(), [["added", "questions"], ["appended", "sources"]]);
      await graphDrawn(t);
      hl = await highlighted(t);
      assert.deepEqual(hl, { research: "hl-next" });
      assert.equal(await t.page.$$eval("[data-testid=task][data-node=research]", (e) => e.length), 3, "three research tasks (Sends)");

      // The head: approved and the report written: changed + added fields, nothing next.
      await t.click(`[data-checkpoint-id="${rows[0].id}"]`);
      await t.waitText("[data-testid=detail-title]", new RegExp(`Step ${rows[0].step}`));
      diff = await diffRows(t);
      assert.deepEqual(diff.map((d) => [d.kind, d.path]), [["added", "report"]]);
      assert.match(diff[0].text, /durable graphs: 3 notes from 1 sources/);
      // The state tree: collapsible, values as text.
      const tree = await t.text("[data-testid=state]");
      assert.match(tree, /approved: true/);
      assert.match(tree, /report: "durable graphs: 3 notes from 1 sources"/);
      await t.page.click("[data-testid=state] details.j-node details.j-node > summary");
      await t.waitFor(() => [...document.querySelectorAll("[data-testid=state] details.j-node details.j-node")].some((d) => !d.open));

      // A deep link to a checkpoint opens it; Back goes back to the one before.
      const s0 = rows.find((r) => r.step === 0);
      await t.goto(`#/threads/${id}/${s0.id}`);
      await t.waitText("[data-testid=detail-title]", /Step 0/);
      assert.equal((await t.rows()).find((r) => r.current).id, s0.id);
      await t.page.goBack();
      await t.waitText("[data-testid=detail-title]", new RegExp(`Step ${rows[0].step}`));
    },
  },
  {
    name: "a long timeline comes in pages (limit/before), loaded on scroll",
    shot: "timeline-pages",
    async run(t) {
      const id = await t.thread("counter");
      await t.api("POST", `/threads/${id}/runs/wait`, { assistant_id: "counter", input: { n: 178 }, config: { recursion_limit: 200 } });
      const asked = [];
      t.page.on("request", (r) => { if (r.url().endsWith(`/threads/${id}/history`)) asked.push(JSON.parse(r.postData())); });
      await t.openThread(id);
      let rows = await t.rows();
      assert.equal(rows.length, 50, "the first page");
      assert.match(await t.text("[data-testid=timeline-count]"), /50\+ checkpoints/);
      assert.match(rows[49].text, /…/, "who wrote the last row is not known before its parent came");
      // Scrolling to the end loads the next page, then the last one.
      await t.page.$eval(".tl-scroll", (e) => { e.scrollTop = e.scrollHeight; });
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length === 150);
      await t.page.$eval(".tl-scroll", (e) => { e.scrollTop = e.scrollHeight; });
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length === 180);
      rows = await t.rows();
      assert.deepEqual(rows.map((r) => r.step), Array.from({ length: 180 }, (_, i) => 178 - i), "every checkpoint once, in order");
      assert.match(rows[49].text, /wrote inc/, "the row above a page learns its writers");
      assert.ok(await t.page.$eval("[data-testid=timeline-more]", (b) => b.hidden), "no more pages");
      assert.match(await t.text("[data-testid=timeline-count]"), /^180 checkpoints/);
      assert.deepEqual(asked.map((b) => b.limit), [50, 100, 100]);
      assert.equal(asked[0].before, undefined);
      assert.equal(asked[1].before, rows[49].id);
      assert.equal(asked[2].before, rows[149].id);
      // A checkpoint of an older page opens and shows its diff.
      await t.click(`[data-checkpoint-id="${rows[160].id}"]`);
      await t.waitText("[data-testid=detail-title]", /Step 18/);
      assert.match(await t.text("[data-testid=diff]"), /count\s*17\s*→\s*18/);
      await t.shot("timeline-pages");
    },
  },
  {
    name: "diff and JSON position units (added, changed, removed, appended, nested)",
    shot: "units",
    async run(t) {
      await t.goto("#/threads");
      const r = await t.page.evaluate(async () => {
        const { diff, parseJSON } = await import("/ui/ui.js");
        const show = (a, b) => diff(a, b).map((d) => [d.kind, d.path, "to" in d ? d.to : "items" in d ? d.items : d.from]);
        return {
          flat: show({ a: 1, b: [1, 2], c: "x", gone: true }, { a: 2, b: [1, 2, 3, 4], c: "x", "new key": null }),
          nested: show({ u: { name: "a", tags: ["x"] }, m: [{ id: 1, t: "hi" }] }, { u: { name: "b", tags: ["x", "y"] }, m: [{ id: 1, t: "hello" }] }),
          replaced: show({ l: [1, 2, 3] }, { l: [3] }),
          same: show({ a: [1, { b: 2 }] }, { a: [1, { b: 2 }] }),
          json: [parseJSON("{\n  \"a\": [1, 2,]\n}"), parseJSON("nul"), parseJSON('"\\x"'), parseJSON("")].map((x) => [x.line, x.col, x.message]),
        };
      });
      t.assert.deepEqual(r.flat, [["removed", "gone", true], ["changed", "a", 2], ["appended", "b", [3, 4]], ["added", '["new key"]', null]]);
      t.assert.deepEqual(r.nested, [["changed", "u.name", "b"], ["appended", "u.tags", ["y"]], ["changed", "m[0].t", "hello"]]);
      t.assert.deepEqual(r.replaced, [["changed", "l", [3]]]);
      t.assert.deepEqual(r.same, []);
      t.assert.deepEqual(r.json, [[2, 14, 'unexpected "]"'], [1, 1, 'unexpected "n"'], [1, 2, "bad escape in string"], [1, 1, "unexpected end of input"]]);
    },
  },
  {
    name: "README screenshot: thread.png at 1280x800",
    shot: "thread",
    async run(t) {
      // The same view as above, alone, so the picture does not depend on other tests.
      const id = await t.thread("research", { topic: "durable graphs" }, { owner: "ana", project: "docs" });
      await t.api("POST", `/threads/${id}/runs/wait`, { assistant_id: "research", command: { resume: "yes" } });
      const hist = await t.history(id);
      const s2 = hist.find((c) => c.metadata.step === 2).checkpoint.checkpoint_id;
      await t.openThread(id, s2);
      await graphDrawn(t);
      await t.page.mouse.move(0, 0);
      await t.page.evaluate(() => document.activeElement && document.activeElement.blur());
      await t.shot("thread");
    },
  },
  {
    name: "errors (node and message) and interrupts with their values",
    shot: "thread-error",
    async run(t) {
      const id = await t.thread("flaky", { why: "the answer was 41" });
      await t.openThread(id);
      assert.equal(await t.page.$eval("[data-testid=thread-status]", (e) => e.dataset.status), "error");
      await t.waitText("[data-testid=run-error-card]", /check: .*bad input: the answer was 41/);
      const task = await t.text("[data-testid=task][data-node=check]");
      assert.match(task, /failed/);
      assert.match(await t.text("[data-testid=task][data-node=check] [data-testid=task-error]"), /check failed: .*bad input: the answer was 41/);
      // `note` ran in the same superstep and succeeded: its write is pending on the checkpoint.
      const note = await t.text("[data-testid=task][data-node=note]");
      assert.match(note, /done \(pending write\)/);
      await t.page.click("[data-testid=task][data-node=note] details > summary");
      assert.match(await t.text("[data-testid=task][data-node=note]"), /notes: \[1 item\]\s*0: "noted"/);
      await graphDrawn(t);
      assert.deepEqual(await highlighted(t), { check: "hl-failed hl-next", note: "hl-next" });
      assert.match((await t.rows())[0].text, /error/);
      await t.shot("thread-error");

      const a = await t.thread("approval", { topic: "tea" });
      await t.openThread(a);
      assert.equal(await t.page.$eval("[data-testid=thread-status]", (e) => e.dataset.status), "interrupted");
      await t.waitText("[data-testid=resume]", /Waiting for input at ask/);
      assert.match(await t.text("[data-testid=interrupt-value]"), /question: "ok\?"/);
      assert.match((await t.rows())[0].text, /interrupt/);
    },
  },
];
