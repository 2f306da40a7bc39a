// The legacy stream mode "messages" (messages/complete, messages/metadata,
// messages/partial) as LangGraph.js's server makes it
// (@langchain/langgraph-api dist/stream.mjs), on `chat`: the ReAct agent on
// the scripted offline model (graphs/chat.lua). Every chat run is the same
// exchange: the user's question, a reply "Let me add them up." calling the
// tool `add` (streamed word by word), the tool's message "42", then the final
// reply "The answer is 42." (streamed word by word).
import { test } from "node:test";
import assert from "node:assert/strict";
import { UUID_RE, client, collect, hasGraph, pairs } from "./_lib.mjs";

const QUESTION = "What is 2 + 40?";
const INPUT = { messages: [{ role: "user", content: QUESTION }] };
// The fake model sends a reply's text word by word, each word with the spaces after it.
const FIRST = ["Let ", "me ", "add ", "them ", "up."];
const FINAL = ["The ", "answer ", "is ", "42."];
const LEGACY = new Set(["messages/complete", "messages/metadata", "messages/partial"]);

async function needChat(t) {
  if (await hasGraph("chat")) return true;
  t.skip("the server has no graph \"chat\" (tests/server/graphs/chat.lua)");
  return false;
}

function checkMetadata(chunks) {
  assert.ok(chunks.length > 0, "the stream has events");
  assert.equal(chunks[0].event, "metadata", "first event is metadata");
  assert.match(chunks[0].data.run_id, UUID_RE);
  assert.equal(chunks[0].data.attempt, 1);
}

// The growing texts of a reply's partials: "Let ", "Let me ", ...
const prefixes = (words) => words.map((_, i) => words.slice(0, i + 1).join(""));

// The id of the message the messages/metadata event at chunks[i] names (its only key).
function metadataId(chunk) {
  assert.equal(chunk.event, "messages/metadata");
  const keys = Object.keys(chunk.data);
  assert.equal(keys.length, 1, `one id per messages/metadata: ${JSON.stringify(chunk.data)}`);
  assert.deepEqual(Object.keys(chunk.data[keys[0]]), ["metadata"]);
  assert.equal(typeof chunk.data[keys[0]].metadata, "object");
  assert.ok(chunk.data[keys[0]].metadata !== null && !Array.isArray(chunk.data[keys[0]].metadata));
  return keys[0];
}

// The messages/* events of one chat run whose input was `history` (the messages the thread
// had before, now sent complete again with the new question): checks the exact sequence and
// returns the messages sent complete, in order.
function checkExchange(events, history = []) {
  const names = events.map((c) => c.event);
  assert.ok(names.every((n) => LEGACY.has(n)), `only messages/* events: ${names}`);
  // [complete(history + question), metadata(A), partial x5, complete(A), complete(tool),
  //  metadata(B), partial x4, complete(B)]
  assert.deepEqual(names, [
    "messages/complete",
    "messages/metadata", ...FIRST.map(() => "messages/partial"),
    "messages/complete",
    "messages/complete",
    "messages/metadata", ...FINAL.map(() => "messages/partial"),
    "messages/complete",
  ]);
  let i = 0;
  const complete = [];
  // The input: every message of the state (the thread's earlier ones too), the question last.
  const first = events[i++].data;
  assert.equal(first.length, history.length + 1, JSON.stringify(first));
  assert.deepEqual(first.slice(0, history.length), history, "the earlier messages, as the state holds them");
  const q = first[history.length];
  assert.equal(q.content, QUESTION);
  assert.equal(q.role, "user");
  assert.match(q.id, UUID_RE, "the question got an id in the state");
  complete.push(...first);
  for (const [words, last] of [[FIRST, true], [FINAL, false]]) {
    const id = metadataId(events[i++]);
    assert.match(id, UUID_RE);
    for (const text of prefixes(words)) {
      const p = events[i++].data;
      assert.ok(Array.isArray(p) && p.length === 1, `a partial is [message]: ${JSON.stringify(p)}`);
      assert.deepEqual(p[0], { content: text, type: "AIMessageChunk", id });
    }
    const ai = events[i++].data;
    assert.equal(ai.length, 1, JSON.stringify(ai));
    assert.equal(ai[0].id, id, "the reply completes under the id its tokens had");
    assert.equal(ai[0].content, words.join(""));
    assert.equal(ai[0].role, "assistant");
    complete.push(ai[0]);
    if (last) {
      assert.equal(ai[0].tool_calls.length, 1);
      assert.equal(ai[0].tool_calls[0].id, "call_1");
      assert.equal(ai[0].tool_calls[0].function.name, "add");
      const tool = events[i++].data;
      assert.equal(tool.length, 1, JSON.stringify(tool));
      assert.equal(tool[0].role, "tool");
      assert.equal(tool[0].content, "42");
      assert.equal(tool[0].tool_call_id, "call_1");
      assert.match(tool[0].id, UUID_RE);
      complete.push(tool[0]);
    }
  }
  const ids = complete.map((m) => m.id);
  assert.equal(new Set(ids).size, ids.length, `each id completes once: ${ids}`);
  return complete;
}

test("chat, streamMode \"messages\": complete, metadata, growing partials; no values", async (t) => {
  if (!(await needChat(t))) return;
  const th = await client.threads.create();
  const chunks = await collect(client.runs.stream(th.thread_id, "chat", { input: INPUT, streamMode: "messages" }));
  checkMetadata(chunks);
  assert.deepEqual(chunks.map((c) => c.id), chunks.map((_, i) => String(i)), "event ids count from 0");
  assert.ok(!chunks.some((c) => c.event === "values"), "\"messages\" alone sends no values events");
  const complete = checkExchange(chunks.slice(1));
  // What was sent complete is the thread's conversation.
  const st = await client.threads.getState(th.thread_id);
  assert.deepEqual(st.values.messages, complete);
  assert.equal(complete.length, 4);

  // A second run on the thread: its input's values hold the whole conversation, all of it new
  // to this run, so it comes complete again first (as LangGraph.js's server does).
  const again = await collect(client.runs.stream(th.thread_id, "chat", { input: INPUT, streamMode: ["messages"] }));
  checkMetadata(again);
  const complete2 = checkExchange(again.slice(1), complete);
  assert.deepEqual((await client.threads.getState(th.thread_id)).values.messages, complete2);
  assert.equal(complete2.length, 8);
});

test("chat, streamMode [messages, values]: each messages/complete follows the values that brought it", async (t) => {
  if (!(await needChat(t))) return;
  const chunks = await collect(client.runs.stream(null, "chat", { input: INPUT, streamMode: ["messages", "values"] }));
  checkMetadata(chunks);
  const p = pairs(chunks);
  const values = p.filter(([e]) => e === "values");
  assert.equal(values.length, 4, "values: the input, then after agent, tools, agent");
  assert.deepEqual(values.map(([, v]) => v.messages.length), [1, 2, 3, 4]);
  checkExchange(p.filter(([e]) => e !== "values").map(([event, data]) => ({ event, data })));
  // Every messages/complete comes right after a values event ending with those messages.
  for (let i = 0; i < p.length; i++) {
    if (p[i][0] !== "messages/complete") continue;
    assert.equal(p[i - 1][0], "values", `event ${i - 1} before messages/complete: ${p[i - 1][0]}`);
    const msgs = p[i - 1][1].messages;
    assert.deepEqual(msgs.slice(msgs.length - p[i][1].length), p[i][1]);
  }
  // A reply's tokens stream while its node runs, between two values events.
  const firstPartial = p.findIndex(([e]) => e === "messages/partial");
  assert.deepEqual(p.slice(0, firstPartial).map(([e]) => e), ["values", "messages/complete", "messages/metadata"]);
});

test("chat, stateless streamMode [\"messages\"]: the same exchange, no event ids", async (t) => {
  if (!(await needChat(t))) return;
  const chunks = await collect(client.runs.stream(null, "chat", { input: INPUT, streamMode: ["messages"] }));
  checkMetadata(chunks);
  assert.ok(chunks.every((c) => c.id === undefined), "stateless streams have no ids");
  checkExchange(chunks.slice(1));
});

test("chat, streamMode [messages-tuple, messages]: both, the tuples as before", async (t) => {
  if (!(await needChat(t))) return;
  const chunks = await collect(client.runs.stream(null, "chat", { input: INPUT, streamMode: ["messages-tuple", "messages"] }));
  checkMetadata(chunks);
  const p = pairs(chunks);
  checkExchange(p.filter(([e]) => e !== "messages").map(([event, data]) => ({ event, data })));
  const tuples = p.filter(([e]) => e === "messages").map(([, d]) => d);
  assert.ok(tuples.every((d) => Array.isArray(d) && d.length === 2), "messages events are [message, metadata]");
  // The tokens of both replies, and the tool's message whole (the replies are not sent again).
  assert.deepEqual(tuples.map(([m]) => m.content), [...FIRST, "42", ...FINAL]);
  assert.ok(!p.some(([e]) => e === "values"), "no values events unless asked for");
});

test("chat, runs.joinStream with streamMode \"messages\": the run's messages/* events only", async (t) => {
  if (!(await needChat(t))) return;
  const th = await client.threads.create();
  const run = await client.runs.create(th.thread_id, "chat", { input: INPUT, streamMode: ["messages", "values"] });
  await client.runs.join(th.thread_id, run.run_id);
  const all = await collect(client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: "-1" }));
  assert.equal(all.filter((c) => c.event === "values").length, 4);
  const only = await collect(client.runs.joinStream(th.thread_id, run.run_id, { lastEventId: "-1", streamMode: "messages" }));
  const body = only.filter((c) => c.event !== "metadata");
  checkExchange(body);
  assert.deepEqual(body, all.filter((c) => LEGACY.has(c.event)), "the same events, with the same ids");
});

test("chat with LangChain-shaped input ({type: \"human\"}, what LangGraph's chat UIs send): the same exchange", async (t) => {
  if (!(await needChat(t))) return;
  const th = await client.threads.create();
  const out = await client.runs.wait(th.thread_id, "chat", { input: { messages: [{ type: "human", content: QUESTION }] } });
  const msgs = out.messages;
  assert.equal(msgs.length, 4, JSON.stringify(msgs));
  assert.equal(msgs[0].role ?? msgs[0].type, msgs[0].role ? "user" : "human", "the question, as a user message");
  assert.equal(msgs[0].content, QUESTION);
  assert.equal(msgs.at(-1).content, FINAL.join(""));
});
