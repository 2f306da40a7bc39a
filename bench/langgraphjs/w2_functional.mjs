// W2 with the functional API: an entrypoint submits K `work` tasks (each
// returns 2x) before awaiting any, then joins all of them and sums, as the
// graph version (w2_fanout.mjs) fans out K Sends and joins them.
// usage: node w2_functional.mjs --saver=none|memory --k=1000
import { entrypoint, task, MemorySaver } from "@langchain/langgraph";
import { measure, argv, emit, round } from "./common.mjs";

const K = Number(argv("k", "1000"));
const saverKind = argv("saver", "none");

function build(checkpointer) {
  const work = task("work", (x) => x * 2);
  return entrypoint({ name: "w2", ...(checkpointer ? { checkpointer } : {}) }, async (items) => {
    const futures = items.map((x) => work(x));
    const results = await Promise.all(futures);
    return { total: results.reduce((a, b) => a + b, 0), n: results.length };
  });
}

const items = Array.from({ length: K }, (_, i) => i);
const expected = K * (K - 1); // sum of 2*i

async function once(tag) {
  const saver = saverKind === "memory" ? new MemorySaver() : undefined;
  const workflow = build(saver);
  const m = await measure(() => workflow.invoke(items, { configurable: { thread_id: `w2f-${tag}` } }));
  if (m.value.total !== expected || m.value.n !== K)
    throw new Error(`bad result total=${m.value.total} n=${m.value.n}`);
  return m;
}

const cold = await once("cold");
const warm = await once("warm");
emit({
  workload: "W2_functional", saver: saverKind, k: K,
  cold_wall_ms: round(cold.wall_ms), warm_wall_ms: round(warm.wall_ms),
  warm_cpu_ms: round(warm.cpu_ms),
  cold_us_per_task: round((cold.wall_ms * 1000) / K, 1),
  warm_us_per_task: round((warm.wall_ms * 1000) / K, 1),
  warm_cpu_us_per_task: round((warm.cpu_ms * 1000) / K, 1),
});
