// configurable keys starting "__" are the engine's and its hosts' (the Python binding's
// "__pyrun__" is an address inside the process): a client's are dropped before the run,
// so they neither reach the graph nor the checkpoints' metadata (and a Python graph's
// server does not crash on them: langgraph.python.json's pass).
import assert from "node:assert/strict";
import test from "node:test";
import { client } from "./_lib.mjs";

test("a client's configurable keys starting __ are dropped; the others reach the run", async () => {
  const thread = await client.threads.create();
  const out = await client.runs.wait(thread.thread_id, "chain", {
    input: {},
    config: { configurable: { __pyrun__: 1234, __other: "x", user_id: "u1" } },
  });
  assert.deepEqual(out, { items: ["a", "b", "c"] });
  const history = await client.threads.getHistory(thread.thread_id, { limit: 1 });
  const meta = history[0].metadata;
  assert.equal(meta.user_id, "u1");
  assert.equal(meta.__pyrun__, undefined);
  assert.equal(meta.__other, undefined);
});
