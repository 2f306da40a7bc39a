// /store: PUT/GET/DELETE /store/items, POST /store/items/search,
// POST /store/namespaces (observed/12_store.json). Every test works under a
// namespace root of its own, so a long-lived server's other items do not matter.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ISO_RE, client, randomUUID, raw } from "./_lib.mjs";

const root = () => `t${randomUUID().replace(/-/g, "")}`;

function checkItem(item, namespace, key, value) {
  for (const k of ["value", "key", "namespace", "created_at", "updated_at"]) assert.ok(k in item, `item has ${k}`);
  assert.deepEqual(item.namespace, namespace);
  assert.equal(item.key, key);
  assert.deepEqual(item.value, value);
  assert.match(item.created_at, ISO_RE);
  assert.match(item.updated_at, ISO_RE);
}

test("putItem (204) then getItem; a missing item is 200 null", async () => {
  const r = root();
  const put = await raw("/store/items", { method: "PUT", json: { namespace: [r, "check"], key: "k1", value: { a: 1, tag: "x" } } });
  assert.equal(put.status, 204);
  assert.equal(put.text, "");
  assert.equal(await client.store.putItem([r, "check"], "k2", { a: 2, tag: "y" }), undefined);

  const got = await client.store.getItem([r, "check"], "k1");
  checkItem(got, [r, "check"], "k1", { a: 1, tag: "x" });
  const rawGet = await raw(`/store/items?namespace=${r}.check&key=k1`);
  assert.equal(rawGet.status, 200);
  assert.match(rawGet.headers.get("content-type") ?? "", /^application\/json/);
  checkItem(rawGet.json, [r, "check"], "k1", { a: 1, tag: "x" });

  assert.equal(await client.store.getItem([r, "check"], "missing"), null);
  const miss = await raw(`/store/items?namespace=${r}.check&key=missing`);
  assert.equal(miss.status, 200);
  assert.equal(miss.text.trim(), "null");
});

test("putItem on an existing key replaces the value and keeps created_at", async () => {
  const r = root();
  await client.store.putItem([r], "k", { v: 1 });
  const a = await client.store.getItem([r], "k");
  await new Promise((res) => setTimeout(res, 10));
  await client.store.putItem([r], "k", { v: 2, extra: [1, 2] });
  const b = await client.store.getItem([r], "k");
  checkItem(b, [r], "k", { v: 2, extra: [1, 2] });
  assert.equal(b.created_at, a.created_at);
  assert.ok(b.updated_at >= a.updated_at);
});

test("deleteItem (204), then the item is gone", async () => {
  const r = root();
  await client.store.putItem([r, "check"], "k2", { a: 2 });
  const del = await raw("/store/items", { method: "DELETE", json: { namespace: [r, "check"], key: "k2" } });
  assert.equal(del.status, 204);
  assert.equal(await client.store.getItem([r, "check"], "k2"), null);
  // Deleting a missing item is not an error.
  assert.equal(await client.store.deleteItem([r, "check"], "k2"), undefined);
});

test("searchItems without a query: by prefix, filter, limit, offset", async () => {
  const r = root();
  await client.store.putItem([r, "check"], "k1", { a: 1, tag: "x" });
  await client.store.putItem([r, "check"], "k2", { a: 2, tag: "y" });
  await client.store.putItem([r, "other"], "k3", { a: 3, tag: "x" });
  await client.store.putItem([`${r}x`], "k4", { a: 4, tag: "x" }); // not under the prefix [r]

  const all = await client.store.searchItems([r], { limit: 10 });
  assert.deepEqual(Object.keys(all), ["items"]);
  assert.deepEqual(all.items.map((i) => i.key).sort(), ["k1", "k2", "k3"]);
  const k3 = all.items.find((i) => i.key === "k3");
  checkItem(k3, [r, "other"], "k3", { a: 3, tag: "x" });

  const check = await client.store.searchItems([r, "check"], { limit: 10 });
  assert.deepEqual(check.items.map((i) => i.key).sort(), ["k1", "k2"]);

  const x = await client.store.searchItems([r], { filter: { tag: "x" } });
  assert.deepEqual(x.items.map((i) => i.key).sort(), ["k1", "k3"]);
  const y = await client.store.searchItems([r, "check"], { filter: { tag: "y" } });
  assert.deepEqual(y.items.map((i) => [i.key, i.value]), [["k2", { a: 2, tag: "y" }]]);
  assert.deepEqual((await client.store.searchItems([r], { filter: { tag: "z" } })).items, []);

  const order = all.items.map((i) => i.key);
  assert.deepEqual((await client.store.searchItems([r], { limit: 1 })).items.map((i) => i.key), order.slice(0, 1));
  assert.deepEqual((await client.store.searchItems([r], { limit: 10, offset: 1 })).items.map((i) => i.key), order.slice(1));
  assert.deepEqual((await client.store.searchItems([r], { limit: 2, offset: 1 })).items.map((i) => i.key), order.slice(1, 3));

  const rawSearch = await raw("/store/items/search", { method: "POST", json: { namespace_prefix: [r, "check"], limit: 10, offset: 0 } });
  assert.equal(rawSearch.status, 200);
  assert.deepEqual(rawSearch.json.items.map((i) => i.key).sort(), ["k1", "k2"]);
});

test("listNamespaces: prefix, suffix, maxDepth, limit/offset", async () => {
  const r = root();
  await client.store.putItem([r, "a"], "k1", { v: 1 });
  await client.store.putItem([r, "a"], "k2", { v: 2 });
  await client.store.putItem([r, "b", "deep"], "k3", { v: 3 });
  await client.store.putItem([r, "c"], "k4", { v: 4 });

  const all = await client.store.listNamespaces({ prefix: [r] });
  assert.deepEqual(Object.keys(all), ["namespaces"]);
  const sorted = (ns) => ns.map((n) => n.join("/")).sort();
  assert.deepEqual(sorted(all.namespaces), [`${r}/a`, `${r}/b/deep`, `${r}/c`]);
  assert.deepEqual(sorted((await client.store.listNamespaces({ prefix: [r], maxDepth: 2 })).namespaces), [`${r}/a`, `${r}/b`, `${r}/c`]);
  assert.deepEqual(sorted((await client.store.listNamespaces({ prefix: [r], maxDepth: 1 })).namespaces), [r]);
  assert.deepEqual(sorted((await client.store.listNamespaces({ prefix: [r], suffix: ["deep"] })).namespaces), [`${r}/b/deep`]);
  assert.deepEqual((await client.store.listNamespaces({ prefix: [r, "nope"] })).namespaces, []);
  const order = all.namespaces.map((n) => n.join("/"));
  assert.deepEqual((await client.store.listNamespaces({ prefix: [r], limit: 1, offset: 1 })).namespaces.map((n) => n.join("/")), order.slice(1, 2));
  assert.deepEqual((await client.store.listNamespaces({ prefix: [r], limit: 2 })).namespaces.map((n) => n.join("/")), order.slice(0, 2));
});
