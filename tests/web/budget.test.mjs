// The first load: every response the page needs before it shows the threads
// (the document, its CSS and scripts) adds up to at most 150 000 bytes,
// uncompressed. The files and their sizes are printed.
import { assert } from "./_lib.mjs";

export const BUDGET = 150000;

export const tests = [
  {
    name: "first load within 150 000 bytes",
    shot: "first-load",
    async run(t) {
      const sizes = new Map();
      const pending = [];
      t.page.on("response", (res) => {
        const u = new URL(res.url());
        if (u.pathname === "/" || u.pathname.startsWith("/ui/")) pending.push(res.buffer().then((b) => sizes.set(u.pathname, b.length), () => {}));
      });
      await t.page.goto(`${t.url}/`, { waitUntil: "networkidle0" });
      await t.page.waitForSelector("[data-testid=threads-list]");
      await Promise.all(pending);
      const total = [...sizes.values()].reduce((a, b) => a + b, 0);
      const list = [...sizes].sort((a, b) => b[1] - a[1]).map(([p, n]) => `${p} ${n}`).join(", ");
      console.log(`  # first load: ${total} bytes in ${sizes.size} files (${list})`);
      for (const f of ["/", "/ui/app.css", "/ui/app.js"]) assert.ok(sizes.has(f), `${f} loaded`);
      assert.ok(total <= BUDGET, `first load ${total} bytes > ${BUDGET}`);
      await t.shot("first-load");
    },
  },
];
