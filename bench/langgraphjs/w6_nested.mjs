// W6: W1's loop three graphs deep (superstep issue 15). The root graph runs
// node "mid", a compiled subgraph that runs node "inner", a compiled subgraph
// that is W1: `inc` adds 1 to a sum field `counter` and loops back until
// counter reaches n. The subgraphs are compiled without a checkpointer, so
// they checkpoint in the root's SqliteSaver under their own namespaces
// ("mid:<task>", "mid:<task>|inner:<task>"). Flat W1 runs on the same saver
// kind in the same process, so the nested/flat ratios are LangGraph.js's own.
// Each run gets a fresh database; a cold then a warm run of each graph,
// alternating; the warm ones are reported.
// usage: node w6_nested.mjs --n=1000
import { StateGraph, Annotation, START, END } from "@langchain/langgraph";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { measure, argv, emit, round } from "./common.mjs";

const N = Number(argv("n", "1000"));

// The same fields as superstep's W1/W6: a sum counter and the target n.
const State = Annotation.Root({
  counter: Annotation({ reducer: (a, b) => a + b, default: () => 0 }),
  n: Annotation(),
});

const w1 = () => new StateGraph(State)
  .addNode("inc", () => ({ counter: 1 }))
  .addEdge(START, "inc")
  .addConditionalEdges("inc", (s) => (s.counter >= s.n ? END : "inc"), ["inc", END]);

// START -> node (the compiled subgraph child) -> END.
const wrap = (node, child) => new StateGraph(State)
  .addNode(node, child)
  .addEdge(START, node)
  .addEdge(node, END);

const builders = {
  flat: () => w1(),
  nested: () => wrap("mid", wrap("inner", w1().compile()).compile()),
};

const fsize = (p) => { try { return fs.statSync(p).size; } catch { return 0; } };

async function once(kind, tag) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "lgjs-w6-"));
  const db = path.join(dir, "checkpoints.sqlite");
  const saver = SqliteSaver.fromConnString(db);
  // Creates the schema now, as superstep's sst_sqlite_saver_open does before its timed
  // invoke; otherwise the first invoke pays for it (hundreds of ms of fsyncs here).
  saver.setup();
  const graph = builders[kind]().compile({ checkpointer: saver });
  const cfg = { recursionLimit: N + 10, configurable: { thread_id: `w6-${kind}-${tag}` } };
  const m = await measure(() => graph.invoke({ counter: 0, n: N }, cfg));
  if (m.value.counter !== N) throw new Error(`${kind}: counter ${m.value.counter} != ${N}`);
  const rows = saver.db.prepare("SELECT checkpoint_ns AS ns, COUNT(*) AS c FROM checkpoints GROUP BY checkpoint_ns").all();
  const depth = [0, 0, 0];
  for (const r of rows) depth[Math.min(r.ns === "" ? 0 : r.ns.split("|").length, 2)] += r.c;
  const blob = Object.values(saver.db.prepare(
    "SELECT (SELECT COALESCE(SUM(LENGTH(checkpoint) + LENGTH(metadata)), 0) FROM checkpoints) + " +
    "(SELECT COALESCE(SUM(LENGTH(value)), 0) FROM writes)").get())[0];
  // The main file once the WAL is folded in, outside the timed region (as W3 does).
  saver.db.pragma("wal_checkpoint(TRUNCATE)");
  const bytes = fsize(db);
  saver.db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  const checkpoints = depth[0] + depth[1] + depth[2];
  return { ...m, bytes, blob, checkpoints, depth };
}

const runs = {};
for (const tag of ["cold", "warm"]) {
  for (const kind of ["flat", "nested"]) runs[`${kind}_${tag}`] = await once(kind, tag);
}
const f = runs.flat_warm, x = runs.nested_warm;
const fig = (r) => ({
  wall_ms: round(r.wall_ms), cpu_ms: round(r.cpu_ms),
  us_per_step: round((r.wall_ms * 1000) / N, 1), cpu_us_per_step: round((r.cpu_ms * 1000) / N, 1),
  db_bytes: r.bytes, blob_bytes: r.blob, checkpoints: r.checkpoints,
  bytes_per_checkpoint: round(r.bytes / r.checkpoints, 1),
});
emit({
  workload: "W6_nested", saver: "sqlite", n: N, supersteps: N,
  ...fig(x), checkpoints_by_depth: x.depth,
  cold_wall_ms: round(runs.nested_cold.wall_ms),
  flat: { ...fig(f), cold_wall_ms: round(runs.flat_cold.wall_ms) },
  nested_over_flat_time: round(x.wall_ms / f.wall_ms), nested_over_flat_cpu: round(x.cpu_ms / f.cpu_ms),
  nested_over_flat_bytes: round(x.bytes / f.bytes),
});
