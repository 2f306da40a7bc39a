// Stored strings are text, never HTML: payloads in metadata, metadata keys,
// state values and keys, interrupt values, task errors and messages show as
// text, and create no element and run no handler.
import { assert } from "./_lib.mjs";

const P = {
  script: "<script>window.__xss='script'</script>",
  img: '"><img src=x onerror="window.__xss=\'img\'">',
  svg: "<svg onload=\"window.__xss='svg'\"></svg>",
  a: "<a href=\"javascript:window.__xss='a'\">click</a>",
};

async function clean(t, where) {
  const r = await t.page.evaluate(() => ({
    xss: window.__xss,
    imgs: document.querySelectorAll("img").length,
    scripts: [...document.querySelectorAll("script")].map((s) => s.getAttribute("src")),
    handlers: [...document.querySelectorAll("*")].filter((e) => [...e.attributes].some((a) => /^on/i.test(a.name))).map((e) => e.outerHTML.slice(0, 80)),
    jsLinks: [...document.querySelectorAll("[href]")].filter((e) => /^\s*javascript:/i.test(e.getAttribute("href"))).length,
    svgs: [...document.querySelectorAll("svg")].filter((s) => !s.closest(".graph-box") && !s.classList.contains("gutter") && !s.classList.contains("icon") && !s.classList.contains("logo")).length,
  }));
  assert.equal(r.xss, undefined, `${where}: a payload ran`);
  assert.equal(r.imgs, 0, `${where}: an <img> was created`);
  assert.deepEqual(r.scripts, ["/ui/app.js"], `${where}: a <script> was created`);
  assert.deepEqual(r.handlers, [], `${where}: an on* attribute was created`);
  assert.equal(r.jsLinks, 0, `${where}: a javascript: link was created`);
  assert.equal(r.svgs, 0, `${where}: an <svg> was created from data`);
}

export const tests = [
  {
    name: "payloads in metadata, state, interrupts, errors and messages show as text",
    shot: "xss",
    async run(t) {
      const tag = `x${Date.now()}`;
      const meta = { tag, title: P.script, [P.img]: P.svg };
      // A thread interrupted with a payload in its state (topic) and metadata.
      const a = await t.thread("approval", { topic: P.img + P.script }, meta);
      await t.api("POST", `/threads/${a}/state`, { values: { approved: { [P.script]: [P.a, P.svg] } } });
      // A failed node whose message holds a payload.
      const f = await t.thread("flaky", { why: P.img }, { tag });
      // Messages holding payloads.
      const m = await t.thread("agent", { messages: [{ role: "user", content: P.img + " " + P.script }] }, { tag });

      await t.goto(`#/threads?q=tag%3D${tag}`);
      await t.waitText("[data-testid=threads-range]", "1–3 of 3");
      const list = await t.text("[data-testid=threads-list]");
      assert.ok(list.includes(P.script), "the metadata value shows as text");
      assert.ok(list.includes(P.img), "the metadata key shows as text");
      await clean(t, "threads list");
      // The search box echoes what it cannot parse: as text.
      await t.type("[data-testid=threads-search]", "<b>bold</b><script>alert(1)</script>");
      await t.page.keyboard.press("Enter");
      await t.waitText("[data-testid=threads-hint]", '"<b>bold</b><script>alert(1)</script>" is neither');
      await clean(t, "search hint");

      await t.openThread(a);
      const page = await t.page.evaluate(() => document.body.innerText);
      assert.ok(page.includes(JSON.stringify(P.img + P.script)), "the state value shows as text");
      assert.ok(page.includes(P.script + ":"), "a state key shows as text");
      assert.ok(page.includes(JSON.stringify(P.a)), "a nested value shows as text");
      assert.ok(page.includes(P.svg), "metadata in the header shows as text");
      await t.waitFor(() => document.querySelector("[data-testid=graph] svg g.node"));
      await clean(t, "interrupted thread");
      // Older checkpoints: their diffs hold the payloads too.
      for (const r of (await t.rows()).slice(0, 3)) {
        await t.click(`[data-checkpoint-id="${r.id}"]`);
        await t.waitFor((id) => location.hash.endsWith(id), r.id);
        await clean(t, `checkpoint step ${r.step}`);
      }
      await t.shot("xss");

      await t.openThread(f);
      await t.waitText("[data-testid=run-error-card]", P.img);
      await clean(t, "failed thread");

      await t.openThread(m);
      await t.click("[data-testid=view-chat]");
      await t.waitText("[data-testid=chat]", P.img + " " + P.script);
      await clean(t, "chat");
      // Fork editor and run input take payloads as JSON text.
      await t.click("[data-testid=view-timeline]");
      await t.click("[data-testid=fork-open]");
      assert.ok((await t.page.$eval("[data-testid=fork-input]", (e) => e.value)).includes("<script>"));
      await clean(t, "fork editor");
    },
  },
  {
    name: "the graph picture is sanitized (script, foreignObject, handlers, links)",
    shot: "xss-svg",
    // Chromium logs a CSP violation for each on* attribute DOMParser meets, though
    // a parsed document never runs them; the assertions below are what counts.
    allowPageErrors: true,
    async run(t) {
      await t.goto("#/threads");
      const r = await t.page.evaluate(async () => {
        const { sanitizeSvg } = await import("/ui/api.js");
        const svg = sanitizeSvg(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" viewBox="0 0 10 10" onload="window.__xss='root'">
          <script>window.__xss='script'</script>
          <g class="node" onclick="window.__xss='g'"><title>a</title><ellipse cx="1" cy="1" rx="1" ry="1" onmouseover="window.__xss='e'"/></g>
          <foreignObject><div xmlns="http://www.w3.org/1999/xhtml"><img src="x" onerror="window.__xss='fo'"/></div></foreignObject>
          <a href="javascript:window.__xss='a'" xlink:href="javascript:window.__xss='xa'"><text style="background:url(javascript:alert(1))">t</text></a>
          <set attributeName="onmouseover" to="window.__xss='set'"/><animate attributeName="href" to="javascript:1"/>
          <image href="x" onerror="window.__xss='image'"/><use href="#x"/>
        </svg>`);
        document.body.append(svg); // in the document: nothing may run
        await new Promise((r) => setTimeout(r, 100));
        const html = svg.outerHTML;
        svg.remove();
        return { html, xss: window.__xss };
      });
      assert.equal(r.xss, undefined);
      assert.doesNotMatch(r.html, /script|foreignObject|onload|onclick|onmouseover|onerror|href|<set|<animate|<image|<use|url\(/i, r.html);
      assert.match(r.html, /<title>a<\/title>/, "the drawing itself stays");
      await clean(t, "svg");
    },
  },
];
