// STORE: LangGraph.js's InMemoryStore with a semantic index (1536 dims).
// N puts of {text, group: i % 10} into one namespace (each put embeds its text),
// then S searches with a query, without a filter and with {group: 3} (~10% of
// the items). The embeddings are deterministic and offline: each text's
// FNV-1a 32 hash seeds mulberry32, whose dims draws in [-1, 1) are normalised
// to unit length (docs/embeddings.md describes the same vectors). Reports
// puts/s, search p50/p99 in ms, and heap bytes per item (heapUsed after a
// forced GC, before and after the puts; the script exposes gc itself).
// usage: node store.mjs --n=100000 --searches=200 --dims=1536
import { InMemoryStore } from "@langchain/langgraph";
import { Embeddings } from "@langchain/core/embeddings";
import v8 from "node:v8";
import vm from "node:vm";
import { now, argv, emit, round } from "./common.mjs";

const N = Number(argv("n", "100000"));
const S = Number(argv("searches", "200"));
const DIMS = Number(argv("dims", "1536"));
const GROUPS = 10;

// FNV-1a 32 over the text's UTF-8 bytes.
const utf8 = new TextEncoder();
function fnv1a32(text) {
  let h = 0x811c9dc5;
  for (const b of utf8.encode(text)) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

// A unit vector of `dims` numbers seeded by the text: mulberry32 draws in [-1, 1).
export function fakeEmbedding(text, dims) {
  let a = fnv1a32(text);
  const v = new Array(dims);
  let norm = 0;
  for (let i = 0; i < dims; i++) {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    const x = (((t ^ (t >>> 14)) >>> 0) / 4294967296) * 2 - 1;
    v[i] = x;
    norm += x * x;
  }
  norm = Math.sqrt(norm) || 1;
  for (let i = 0; i < dims; i++) v[i] /= norm;
  return v;
}

// What an OpenAIEmbeddings object looks like to the store, without the network.
class FakeEmbeddings extends Embeddings {
  constructor(dims) {
    super({});
    this.dims = dims;
    this.calls = 0;
  }
  async embedDocuments(texts) {
    this.calls++;
    return texts.map((t) => fakeEmbedding(t, this.dims));
  }
  async embedQuery(text) {
    this.calls++;
    return fakeEmbedding(text, this.dims);
  }
}

// gc() without --expose-gc on the command line: the flag set at run time
// gives new contexts the function.
v8.setFlagsFromString("--expose-gc");
const gc = globalThis.gc ?? vm.runInNewContext("gc");
function heapUsed() {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

function percentile(sorted, p) {
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

async function searches(store, filter) {
  const ms = [];
  const c0 = process.cpuUsage();
  let hits = 0;
  for (let i = 0; i < S; i++) {
    const query = `what about topic ${(i * 7919) % N}?`;
    const t0 = now();
    const res = await store.search(["docs"], filter ? { query, filter, limit: 10 } : { query, limit: 10 });
    ms.push(now() - t0);
    if (res.length !== Math.min(10, filter ? Math.ceil(N / GROUPS) : N)) {
      throw new Error(`search ${i}: ${res.length} results`);
    }
    if (filter && res.some((r) => r.value.group !== 3)) throw new Error("the filter was not applied");
    if (res.some((r) => typeof r.score !== "number")) throw new Error("a result has no score");
    hits += res.length;
  }
  const c = process.cpuUsage(c0);
  ms.sort((a, b) => a - b);
  const total = ms.reduce((s, x) => s + x, 0);
  return { p50_ms: round(percentile(ms, 50)), p99_ms: round(percentile(ms, 99)),
    mean_ms: round(total / S), cpu_ms_per_search: round((c.user + c.system) / 1000 / S), hits };
}

const embeddings = new FakeEmbeddings(DIMS);
const store = new InMemoryStore({ index: { dims: DIMS, embeddings, fields: ["text"] } });

const heap0 = heapUsed();
const rss0 = process.memoryUsage().rss;
const c0 = process.cpuUsage();
const t0 = now();
for (let i = 0; i < N; i++) {
  await store.put(["docs"], `item-${i}`, { text: `document ${i} about topic ${i % 997}`, group: i % GROUPS });
}
const putMs = now() - t0;
const putCpu = process.cpuUsage(c0);
const heap1 = heapUsed();
const rss1 = process.memoryUsage().rss;

const got = await store.get(["docs"], "item-3");
if (got?.value.group !== 3) throw new Error("get after put failed");

const plain = await searches(store, null);
const filtered = await searches(store, { group: 3 });

emit({
  workload: "STORE", impl: "langgraphjs-inmemorystore", n: N, dims: DIMS, searches: S,
  put_wall_ms: round(putMs), puts_per_s: Math.round(N / (putMs / 1000)),
  us_per_put: round((putMs * 1000) / N, 2),
  cpu_us_per_put: round((putCpu.user + putCpu.system) / N, 2),
  search_p50_ms: plain.p50_ms, search_p99_ms: plain.p99_ms, search_mean_ms: plain.mean_ms,
  search_cpu_ms: plain.cpu_ms_per_search,
  filtered_search_p50_ms: filtered.p50_ms, filtered_search_p99_ms: filtered.p99_ms,
  filtered_search_mean_ms: filtered.mean_ms, filtered_search_cpu_ms: filtered.cpu_ms_per_search,
  heap_bytes_per_item: Math.round((heap1 - heap0) / N),
  rss_bytes_per_item: Math.round((rss1 - rss0) / N),
  embed_calls: embeddings.calls,
});
