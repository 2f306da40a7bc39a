// --auth-token-env: the page (served without a token) asks for the token on
// the first 401, keeps it in sessionStorage and sends it on every API call.
import { assert } from "./_lib.mjs";

export const tests = [
  {
    name: "the token form on the first 401, a wrong token asked again, kept for the tab",
    shot: "auth",
    async run(t) {
      const token = "web-test-token-" + Date.now();
      const s = await t.startServer({
        args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--workers", "1", "--auth-token-env", "SST_WEB_TEST_TOKEN", "--quiet"],
        env: { SST_WEB_TEST_TOKEN: token },
      });
      const th = await t.api("POST", "/threads", { metadata: { who: "auth" } }, { token, base: s.url });
      await t.api("POST", `/threads/${th.thread_id}/runs/wait`, { assistant_id: "chain", input: { items: ["x"] } }, { token, base: s.url });
      const sent = [];
      t.page.on("request", (r) => { const u = new URL(r.url()); if (!u.pathname.startsWith("/ui/") && u.pathname !== "/") sent.push({ path: u.pathname, auth: r.headers().authorization || null }); });

      await t.goto("#/threads", s.url);
      // The page itself loads; the API answers 401: the form shows.
      await t.page.waitForSelector("[data-testid=auth-dialog][open]", { visible: true });
      assert.match(await t.text("[data-testid=auth-dialog]"), /needs an access token/);
      assert.equal(await t.page.evaluate(() => document.activeElement.dataset.testid), "auth-token", "the field has the focus");
      await t.shot("auth");
      await t.page.type("[data-testid=auth-token]", "wrong");
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=auth-dialog]", /refused that token/);
      assert.ok(await t.page.$("[data-testid=auth-dialog][open]"));
      await t.page.type("[data-testid=auth-token]", token);
      await t.click("[data-testid=auth-submit]");
      await t.waitFor((id) => document.querySelector(`[data-thread-id="${id}"]`), th.thread_id);
      assert.equal(await t.page.$("[data-testid=auth-dialog][open]"), null);
      assert.equal(await t.page.evaluate(() => sessionStorage.getItem("superstep.token")), token);

      // Every API call after it carries the token; the thread opens, a run streams.
      sent.length = 0;
      await t.click(`[data-thread-id="${th.thread_id}"]`);
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length === 5);
      await t.waitFor(() => document.querySelector("[data-testid=graph] svg g.node"));
      await t.page.$eval("[data-testid=run-card]", (d) => { d.open = true; });
      await t.type("[data-testid=run-input]", '{"items": ["y"]}');
      await t.click("[data-testid=run-button]");
      await t.waitText("[data-testid=run-state]", "Run finished");
      assert.ok(sent.length >= 4, JSON.stringify(sent));
      for (const r of sent) assert.equal(r.auth, `Bearer ${token}`, `${r.path} carries the token`);
      assert.ok(sent.some((r) => r.path.endsWith("/runs/stream")), "the stream too");
      assert.ok(sent.some((r) => r.path.endsWith("/graph.svg")), "and the graph picture");

      // A reload keeps it (sessionStorage): no form.
      await t.page.reload({ waitUntil: "domcontentloaded" });
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length > 5);
      assert.equal(await t.page.$("[data-testid=auth-dialog][open]"), null);
      // Sign out forgets it.
      await t.click("#sign-out");
      await t.page.waitForSelector("[data-testid=auth-dialog][open]", { visible: true });
      assert.equal(await t.page.evaluate(() => sessionStorage.getItem("superstep.token")), null);
    },
  },
];
