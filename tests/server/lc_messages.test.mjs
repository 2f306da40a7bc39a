// Messages both ways in LangChain's shape (docs/server.md "Messages in LangChain's shape"),
// through LangGraph's JS SDK, on `chat` (the ReAct agent on the scripted model): every
// message the API answers or streams has LangChain's `type` beside its stored `role`, its
// id, name, tool_call_id, additional_kwargs and response_metadata; an AI message's tool
// calls carry `name` and `args`; a tool call edited in LangChain's shape is stored in
// OpenAI's, which the model and tools read.
import { test } from "node:test";
import assert from "node:assert/strict";
import { ON_PEER, UUID_RE, client, collect, hasGraph } from "./_lib.mjs";

const INPUT = { messages: [{ type: "human", content: "What is 2 + 40?", id: "q-1", additional_kwargs: { from: "ui" } }] };

async function needChat(t) {
  if (ON_PEER || !(await hasGraph("chat"))) {
    t.skip("the server has no graph \"chat\" (tests/server/graphs/chat.lua)");
    return false;
  }
  return true;
}

function checkExchange(msgs) {
  assert.deepEqual(msgs.map((m) => m.type), ["human", "ai", "tool", "ai"]);
  const [q, a, tool, fin] = msgs;
  assert.equal(q.id, "q-1", "the id given is kept");
  assert.equal(q.content, "What is 2 + 40?");
  assert.deepEqual(q.additional_kwargs, { from: "ui" }, "additional_kwargs kept");
  assert.deepEqual(q.response_metadata, {});
  assert.match(a.id, UUID_RE);
  assert.equal(a.role, "assistant", "the stored role stays");
  assert.equal(a.tool_calls.length, 1);
  const call = a.tool_calls[0];
  assert.equal(call.id, "call_1");
  assert.equal(call.name, "add");
  assert.deepEqual(call.args, { a: 2, b: 40 });
  assert.deepEqual(a.invalid_tool_calls, []);
  assert.equal(tool.tool_call_id, "call_1");
  assert.equal(tool.name, "add");
  assert.equal(tool.content, "42");
  assert.equal(fin.content, "The answer is 42.");
  assert.deepEqual(fin.tool_calls, []);
}

test("LangChain messages in, LangChain messages out: runs.wait, state, history, thread", async (t) => {
  if (!(await needChat(t))) return;
  const th = await client.threads.create();
  const out = await client.runs.wait(th.thread_id, "chat", { input: INPUT });
  checkExchange(out.messages);
  checkExchange((await client.threads.getState(th.thread_id)).values.messages);
  checkExchange((await client.threads.get(th.thread_id)).values.messages);
  const [head] = await client.threads.getHistory(th.thread_id, { limit: 1 });
  checkExchange(head.values.messages);
});

test("stream modes values, updates and messages-tuple give what useStream reads", async (t) => {
  if (!(await needChat(t))) return;
  const th = await client.threads.create();
  const chunks = await collect(client.runs.stream(th.thread_id, "chat", { input: INPUT, streamMode: ["values", "updates", "messages-tuple"] }));
  const values = chunks.filter((c) => c.event === "values");
  checkExchange(values.at(-1).data.messages);
  const updates = chunks.filter((c) => c.event === "updates").flatMap((c) => Object.values(c.data)).flatMap((u) => u.messages ?? []);
  assert.ok(updates.length >= 3 && updates.every((m) => typeof m.type === "string"), JSON.stringify(updates));
  // messages-tuple: [message chunk, metadata]; the tokens' chunks are AIMessageChunks whose
  // id is the reply's id in the state.
  const tuples = chunks.filter((c) => c.event === "messages").map((c) => c.data);
  assert.ok(tuples.length > 0);
  for (const [msg, meta] of tuples) {
    assert.equal(typeof msg.type, "string");
    assert.equal(typeof meta, "object");
  }
  const finalId = values.at(-1).data.messages[3].id;
  const tokens = tuples.filter(([m]) => m.id === finalId).map(([m]) => m.content).join("");
  assert.equal(tokens, "The answer is 42.");
  assert.ok(tuples.filter(([m]) => m.id === finalId).every(([m]) => m.type === "AIMessageChunk"));
});

test("a tool call edited in LangChain's shape is stored in OpenAI's", async (t) => {
  if (!(await needChat(t))) return;
  const th = await client.threads.create();
  const out = await client.runs.wait(th.thread_id, "chat", { input: INPUT });
  const ai = out.messages[1];
  // What a UI sends back: the message as it came, its call's args edited (LangChain's members).
  const edited = { ...ai, tool_calls: [{ name: "add", args: { a: 5, b: 5 }, id: "call_1", type: "tool_call" }] };
  await client.threads.updateState(th.thread_id, { values: { messages: [edited] } });
  const st = await client.threads.getState(th.thread_id);
  const call = st.values.messages[1].tool_calls[0];
  assert.deepEqual(call.function, { name: "add", arguments: "{\"a\":5,\"b\":5}" }, "stored as OpenAI's call");
  assert.equal(call.type, "function");
  assert.deepEqual(call.args, { a: 5, b: 5 });
  assert.equal(st.values.messages[1].id, ai.id, "replaced in place (add_messages by id)");
  assert.equal(st.values.messages.length, 4);
});
