// Live: the JSON input editor, a run streamed into the timeline, resuming an
// interrupt, forking an old checkpoint, cancelling a run.
import { assert } from "./_lib.mjs";

async function openRunCard(t) {
  await t.page.waitForSelector("[data-testid=run-card]");
  await t.page.$eval("[data-testid=run-card]", (d) => { d.open = true; });
}
const runDisabled = (t) => t.page.$eval("[data-testid=run-button]", (b) => b.disabled);
const finished = (t, re) => t.waitText("[data-testid=run-state]", re);

export const tests = [
  {
    name: "JSON editor: errors with line and column, Run disabled while invalid",
    shot: "editor",
    async run(t) {
      const id = await t.thread("counter");
      await t.goto(`#/threads/${id}`);
      await t.page.waitForSelector("[data-testid=run-card][open]"); // a thread without checkpoints opens it
      await t.waitFor(() => !document.querySelector("[data-testid=run-button]").disabled);
      await t.type("[data-testid=run-input]", '{\n  "n": 3,\n  "delay_ms": }');
      await t.waitText("[data-testid=run-input-error]", /line 3, column 15/);
      assert.ok(await runDisabled(t), "Run is disabled while the input is invalid");
      assert.equal(await t.page.$eval("[data-testid=run-input]", (e) => e.getAttribute("aria-invalid")), "true");
      await t.shot("editor");
      await t.type("[data-testid=run-input]", '{"n": "unterminated}');
      await t.waitText("[data-testid=run-input-error]", /line 1, column 21: unterminated string/);
      await t.type("[data-testid=run-input]", '{"n": 1} x');
      await t.waitText("[data-testid=run-input-error]", /line 1, column 10/);
      await t.type("[data-testid=run-input]", '{"n": 2}');
      await t.waitFor(() => document.querySelector("[data-testid=run-input-error]").textContent === "");
      assert.equal(await runDisabled(t), false);
    },
  },
  {
    name: "start a run and watch it stream into the timeline and the graph",
    shot: "live-run",
    async run(t) {
      const id = await t.thread("counter");
      await t.goto(`#/threads/${id}`);
      await openRunCard(t);
      await t.type("[data-testid=run-input]", '{"n": 5, "delay_ms": 250}');
      await t.waitFor(() => !document.querySelector("[data-testid=run-button]").disabled);
      await t.click("[data-testid=run-button]");
      await t.waitText("[data-testid=run-state]", /Running run [0-9a-f]{8}/);
      // Checkpoints appear while the run still runs; what the page shows then is read in
      // the same moment (the run may end right after).
      const during = await t.waitFor(() => document.querySelector("[data-testid=run-status] [data-state=running]") &&
        document.querySelectorAll("[data-testid=timeline-row]").length >= 3 &&
        { status: document.querySelector("[data-testid=thread-status]").dataset.status,
          runDisabled: document.querySelector("[data-testid=run-button]").disabled });
      assert.equal(during.status, "busy");
      assert.ok(during.runDisabled, "no second run while one streams");
      // The running node is highlighted in the graph while its task runs, and the legend
      // says so (read in the same moment as the highlight).
      const legend = await t.waitFor(() => document.querySelector("[data-testid=graph] g.node.hl-running[data-node=inc]") &&
        document.querySelector("[data-testid=graph-legend]").textContent);
      assert.match(legend, /running\s*inc/);
      assert.match(await t.text("[data-testid=run-log]"), /checkpoint: step \d/);
      await t.shot("live-run");
      await finished(t, "Run finished");
      const rows = await t.rows();
      assert.deepEqual(rows.map((r) => r.step), [5, 4, 3, 2, 1, 0, -1]);
      assert.match(rows[0].text, /head/);
      assert.match(rows[1].text, /wrote inc/);
      assert.equal(await t.page.$eval("[data-testid=thread-status]", (e) => e.dataset.status), "idle");
      assert.match(await t.text("[data-testid=state]"), /count: 5/);
      const hist = await t.history(id);
      assert.deepEqual(rows.map((r) => r.id), hist.map((c) => c.checkpoint.checkpoint_id), "the live rows are the stored checkpoints");
    },
  },
  {
    name: "a run started elsewhere is followed live (joined stream)",
    shot: "live-join",
    async run(t) {
      const id = await t.thread("counter");
      // A background run streaming only values: the page joins it and reloads the head as values come.
      const run = await t.api("POST", `/threads/${id}/runs`, { assistant_id: "counter", input: { n: 8, delay_ms: 600 } });
      // The page follows a thread that reads busy when it opens, which it does from the
      // run's claim on (a pending run leaves it idle): on a slow (sanitizer) build the
      // claim can come after the page has opened, so wait for it.
      for (let i = 0; (await t.api("GET", `/threads/${id}`)).status !== "busy"; i++) {
        if (i > 400) throw new Error(`thread ${id} did not turn busy`);
        await new Promise((r) => setTimeout(r, 50));
      }
      await t.goto(`#/threads/${id}`);
      await t.waitText("[data-testid=run-state]", new RegExp(`Running run ${run.run_id.slice(0, 8)}`));
      await t.waitFor(() => document.querySelector("[data-testid=run-status] [data-state=running]") && document.querySelectorAll("[data-testid=timeline-row]").length >= 4);
      await t.shot("live-join");
      await t.waitText("[data-testid=run-state]", "Run finished");
      assert.deepEqual((await t.rows()).map((r) => r.step), [8, 7, 6, 5, 4, 3, 2, 1, 0, -1]);
      assert.match(await t.text("[data-testid=state]"), /count: 8/);
    },
  },
  {
    name: "resume an interrupt with a value",
    shot: "resume",
    async run(t) {
      const id = await t.thread("approval");
      await t.goto(`#/threads/${id}`);
      await openRunCard(t);
      await t.type("[data-testid=run-input]", '{"topic": "tea"}');
      await t.click("[data-testid=run-button]");
      await finished(t, /paused/);
      await t.waitText("[data-testid=resume]", /Waiting for input at ask/);
      assert.match(await t.text("[data-testid=interrupt-value]"), /question: "ok\?"/);
      assert.equal(await t.page.$eval("[data-testid=thread-status]", (e) => e.dataset.status), "interrupted");
      await t.type("[data-testid=resume-input]", '{"answer": "yes", "by": "web"');
      await t.waitText("[data-testid=resume-input-error]", /line 1, column 30: unexpected end of input/);
      assert.ok(await t.page.$eval("[data-testid=resume-button]", (b) => b.disabled));
      await t.type("[data-testid=resume-input]", '{"answer": "yes", "by": "web"}');
      await t.waitFor(() => !document.querySelector("[data-testid=resume-button]").disabled);
      await t.click("[data-testid=resume-button]");
      await finished(t, "Run finished");
      assert.equal(await t.page.$eval("[data-testid=thread-status]", (e) => e.dataset.status), "idle");
      assert.equal(await t.page.$("[data-testid=resume]"), null);
      const st = await t.state(id);
      assert.deepEqual(st.values.approved, { answer: "yes", by: "web" });
      const diff = await t.page.$$eval("[data-testid=diff-row]", (els) => els.map((e) => [e.dataset.kind, e.dataset.path]));
      assert.deepEqual(diff, [["added", "approved"]]);
    },
  },
  {
    name: "fork: edit the state at an old checkpoint and run from there",
    shot: "fork",
    async run(t) {
      const id = await t.thread("counter", { n: 3 });
      const before = await t.history(id);
      const s1 = before.find((c) => c.metadata.step === 1);
      assert.equal(s1.values.count, 1);
      await t.openThread(id, s1.checkpoint.checkpoint_id);
      await t.waitText("[data-testid=detail-title]", /Step 1/);
      await t.click("[data-testid=fork-open]");
      await t.page.waitForSelector("[data-testid=fork-input]");
      const text = await t.page.$eval("[data-testid=fork-input]", (e) => e.value);
      assert.deepEqual(JSON.parse(text), s1.values, "the editor starts from the checkpoint's state");
      await t.type("[data-testid=fork-input]", JSON.stringify({ ...s1.values, n: 6 }, null, 2));
      // A slow server: history answers late. "Run finished" must still wait for the
      // refresh that brings the run's checkpoints (the page once said it before).
      await t.page.setRequestInterception(true);
      const slow = (r) => { if (r.isInterceptResolutionHandled()) return; if (r.url().endsWith("/history")) setTimeout(() => r.continue(), 400); else r.continue(); };
      t.page.on("request", slow);
      await t.click("[data-testid=fork-button]");
      await finished(t, "Run finished");
      const shown = (await t.rows()).length;
      t.page.off("request", slow);
      await t.page.setRequestInterception(false);
      assert.equal(shown, before.length + 6, "the timeline holds the run when the card says it finished");
      await t.waitFor((id) => location.hash === `#/threads/${id}`, id);
      // The new line: update (step 2) then steps 3..7, a branch off step 1.
      const st = await t.state(id);
      assert.equal(st.values.count, 6);
      assert.equal(st.values.n, 6);
      const rows = await t.rows();
      assert.equal(rows.length, before.length + 6);
      const upd = rows.find((r) => r.source === "update");
      assert.ok(upd, "the edit is a checkpoint of source update");
      assert.match(upd.text, /edited/);
      assert.ok(rows.some((r) => r.lane === 1), "the old line is drawn in a second lane");
      const fork = rows.find((r) => r.id === s1.checkpoint.checkpoint_id);
      assert.match(fork.text, /2 branches/, "the fork point is marked");
      assert.match(rows.find((r) => r.id === before[0].checkpoint.checkpoint_id).text, /branch/);
      await t.click(`[data-checkpoint-id="${upd.id}"]`);
      await t.waitText("[data-testid=detail-title]", /Step 2/);
      const diff = await t.page.$$eval("[data-testid=diff-row]", (els) => els.map((e) => [e.dataset.kind, e.dataset.path, e.textContent]));
      assert.equal(diff.length, 1);
      assert.equal(diff[0][0], "changed");
      assert.equal(diff[0][1], "n");
      assert.match(diff[0][2], /3\s*→\s*6/);
      await t.shot("fork");
    },
  },
  {
    name: "cancel a running run",
    shot: "cancel",
    async run(t) {
      const id = await t.thread("counter");
      await t.goto(`#/threads/${id}`);
      await openRunCard(t);
      await t.type("[data-testid=run-input]", '{"n": 20, "delay_ms": 400}');
      await t.click("[data-testid=run-button]");
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length >= 3);
      await t.waitFor(() => !document.querySelector("[data-testid=cancel-button]").disabled);
      await t.click("[data-testid=cancel-button]");
      await finished(t, "Run cancelled");
      await t.waitFor(() => document.querySelector("[data-testid=thread-status]").dataset.status === "idle");
      const runs = await t.api("GET", `/threads/${id}/runs`);
      assert.equal(runs[0].status, "interrupted", "a cancelled run ends interrupted");
      const st = await t.state(id);
      assert.ok(st.values.count < 20, `stopped early (count ${st.values.count})`);
      await t.shot("cancel");
    },
  },
];
