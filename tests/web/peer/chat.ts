// The twin of superstep's `chat` agent (tests/server/graphs/chat.lua: create_react_agent on
// the scripted model) for LangGraph.js's own dev server, so that tests/web/peer/compare.mjs
// can run the same useStream page against both servers. Same shape as superstep's agent
// without middleware (src/agent/react.c): START -> llm_call -> one `tool` task per tool call
// (Send) -> llm_call ... -> END; `iteration` counts model calls. The model replays the very
// file superstep's fake model reads (tests/server/graphs/chat_replies.jsonl), one reply per
// call, in order, each reply's text streamed word by word (each word with the spaces after
// it) as superstep's src/agent/fake_model.c does; OpenAI-shaped tool calls become
// LangChain's {name, args, id}.
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { randomUUID } from "node:crypto";
import { Annotation, END, START, Send, StateGraph, messagesStateReducer } from "@langchain/langgraph";
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage, AIMessageChunk, ToolMessage, type BaseMessage } from "@langchain/core/messages";
import { ChatGenerationChunk, type ChatResult } from "@langchain/core/outputs";

const here = path.dirname(fileURLToPath(import.meta.url));
const script = fs
  .readFileSync(path.join(here, "../../server/graphs/chat_replies.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l.trim() !== "")
  .map((l) => JSON.parse(l));

type Reply = {
  content: string;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
};

class ScriptedChatModel extends BaseChatModel {
  next = 0;

  _llmType() {
    return "scripted";
  }

  private take(): Reply {
    if (this.next >= script.length) {
      throw new Error(`fake model: the script has no reply ${this.next + 1} (it holds ${script.length})`);
    }
    return script[this.next++];
  }

  private static calls(r: Reply) {
    return (r.tool_calls ?? []).map((c) => ({
      id: c.id,
      name: c.function.name,
      args: JSON.parse(c.function.arguments),
      type: "tool_call" as const,
    }));
  }

  async _generate(): Promise<ChatResult> {
    const r = this.take();
    const message = new AIMessage({ id: randomUUID(), content: r.content, tool_calls: ScriptedChatModel.calls(r) });
    return { generations: [{ text: r.content, message }] };
  }

  async *_streamResponseChunks(_m: BaseMessage[], _o: this["ParsedCallOptions"], runManager?: any) {
    const r = this.take();
    const id = randomUUID();
    const words = r.content.match(/[^ ]+ *| +/g) ?? [""];
    const calls = ScriptedChatModel.calls(r);
    for (let i = 0; i < words.length; i++) {
      const last = i === words.length - 1;
      const chunk = new ChatGenerationChunk({
        text: words[i],
        message: new AIMessageChunk({
          id,
          content: words[i],
          tool_call_chunks: last
            ? calls.map((c, index) => ({ id: c.id, name: c.name, args: JSON.stringify(c.args), index, type: "tool_call_chunk" as const }))
            : [],
        }),
      });
      yield chunk;
      await runManager?.handleLLMNewToken(words[i], undefined, undefined, undefined, undefined, { chunk });
    }
  }
}

const model = new ScriptedChatModel({});

const tools: Record<string, (args: any) => unknown> = {
  add: ({ a, b }: { a: number; b: number }) => a + b,
};

const State = Annotation.Root({
  messages: Annotation<BaseMessage[]>({ reducer: messagesStateReducer, default: () => [] }),
  iteration: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});

type Call = { id: string; name: string; args: Record<string, unknown> };

export const chat = new StateGraph(State)
  .addNode("llm_call", async (s, config) => ({ messages: [await model.invoke(s.messages, config)], iteration: 1 }))
  .addNode("tool", async (call: Call) => ({
    messages: [
      new ToolMessage({ content: JSON.stringify(tools[call.name](call.args)), tool_call_id: call.id, name: call.name }),
    ],
  }))
  .addEdge(START, "llm_call")
  .addConditionalEdges(
    "llm_call",
    (s) => {
      const last = s.messages.at(-1) as AIMessage;
      const calls = last?.tool_calls ?? [];
      return calls.length > 0 ? calls.map((c) => new Send("tool", c)) : END;
    },
    ["tool", END],
  )
  .addEdge("tool", "llm_call")
  .compile();
