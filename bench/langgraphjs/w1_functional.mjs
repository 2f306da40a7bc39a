// W1 with the functional API: an entrypoint calls the task `inc` (x + 1) N
// times in sequence (`x = await inc(x)`) and returns x: N task calls in one
// entrypoint run, where the graph version (w1_loop.mjs) runs N supersteps.
// usage: node w1_functional.mjs --saver=none|memory --n=1000
import { entrypoint, task, MemorySaver } from "@langchain/langgraph";
import { measure, argv, emit, round } from "./common.mjs";

const N = Number(argv("n", "1000"));
const saverKind = argv("saver", "none");

function build(checkpointer) {
  const inc = task("inc", (x) => x + 1);
  return entrypoint({ name: "w1", ...(checkpointer ? { checkpointer } : {}) }, async (n) => {
    let x = 0;
    for (let i = 0; i < n; i++) x = await inc(x);
    return x;
  });
}

async function once(tag) {
  const saver = saverKind === "memory" ? new MemorySaver() : undefined;
  const workflow = build(saver);
  const cfg = { recursionLimit: N + 10, configurable: { thread_id: `w1f-${tag}` } };
  const m = await measure(() => workflow.invoke(N, cfg));
  if (m.value !== N) throw new Error(`result ${m.value} != ${N}`);
  m.checkpoints = saver ? Object.keys(saver.storage[`w1f-${tag}`][""]).length : null;
  return m;
}

const cold = await once("cold");   // first run in a fresh process (includes JIT warm-up)
const warm = await once("warm");   // second run, same process, fresh entrypoint + saver
emit({
  workload: "W1_functional", saver: saverKind, n: N, tasks: N,
  cold_wall_ms: round(cold.wall_ms), warm_wall_ms: round(warm.wall_ms),
  warm_cpu_ms: round(warm.cpu_ms),
  cold_us_per_task: round((cold.wall_ms * 1000) / N, 1),
  warm_us_per_task: round((warm.wall_ms * 1000) / N, 1),
  warm_cpu_us_per_task: round((warm.cpu_ms * 1000) / N, 1),
  checkpoints_per_run: warm.checkpoints,
});
