// Users and ownership (docs/auth.md): a server with langgraph.json's "auth" (the worked
// example, examples/auth: JWT HS256). The page asks for the user's token on the first
// 401, keeps it for the tab only (sessionStorage), and lists only that user's threads;
// another tab (a fresh context) asks again, and signed in as another user sees theirs.
import crypto from "node:crypto";
import path from "node:path";
import { assert } from "./_lib.mjs";

const SECRET = crypto.randomBytes(48).toString("base64");
const b64 = (o) => Buffer.from(JSON.stringify(o)).toString("base64url");
function jwt(sub) {
  const h = b64({ alg: "HS256", typ: "JWT" });
  const p = b64({ sub, iss: "https://auth.example.com", aud: "superstep", exp: Math.floor(Date.now() / 1000) + 3600 });
  return `${h}.${p}.${crypto.createHmac("sha256", SECRET).update(`${h}.${p}`).digest("base64url")}`;
}

export const tests = [
  {
    name: "with JWT users the page asks for the user's token and shows only their threads",
    shot: "users",
    async run(t) {
      const s = await t.startServer({
        config: path.join(t.here, "..", "..", "examples", "auth", "langgraph.json"),
        args: ["--host", "127.0.0.1", "--port", "0", "--db", ":memory:", "--workers", "1", "--quiet"],
        env: { AUTH_JWT_SECRET: SECRET },
      });
      const alice = jwt("alice"), bob = jwt("bob");
      const mine = await t.api("POST", "/threads", { metadata: { topic: "alice's notes" } }, { token: alice, base: s.url });
      await t.api("POST", `/threads/${mine.thread_id}/runs/wait`, { assistant_id: "notes", input: { note: "hello" } }, { token: alice, base: s.url });
      const theirs = await t.api("POST", "/threads", { metadata: { topic: "bob's notes" } }, { token: bob, base: s.url });

      await t.goto("#/threads", s.url);
      await t.page.waitForSelector("[data-testid=auth-dialog][open]", { visible: true });
      await t.page.type("[data-testid=auth-token]", "not-a-jwt");
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=auth-dialog]", /refused that token/);
      await t.page.type("[data-testid=auth-token]", alice);
      await t.click("[data-testid=auth-submit]");
      await t.waitFor((id) => document.querySelector(`[data-thread-id="${id}"]`), mine.thread_id);
      assert.equal(await t.page.$(`[data-thread-id="${theirs.thread_id}"]`), null, "bob's thread is not listed");
      assert.equal(await t.page.evaluate(() => sessionStorage.getItem("superstep.token")), alice);
      assert.equal(await t.page.evaluate(() => localStorage.length), 0, "nothing outlives the tab");
      await t.click(`[data-thread-id="${mine.thread_id}"]`);
      await t.waitFor(() => document.querySelectorAll("[data-testid=timeline-row]").length > 0);
      await t.shot("users");

      // Another tab (a fresh browser context: its own sessionStorage) asks again; bob sees his.
      const ctx = await t.browser.createBrowserContext();
      try {
        const page = await ctx.newPage();
        await page.goto(`${s.url}/#/threads`, { waitUntil: "domcontentloaded" });
        await page.waitForSelector("[data-testid=auth-dialog][open]", { visible: true });
        await page.type("[data-testid=auth-token]", bob);
        await page.click("[data-testid=auth-submit]");
        await page.waitForSelector(`[data-thread-id="${theirs.thread_id}"]`, { timeout: 20000 });
        assert.equal(await page.$(`[data-thread-id="${mine.thread_id}"]`), null, "alice's thread is not listed");
      } finally {
        await ctx.close();
      }
    },
  },
];
