// A small React front end on LangGraph's useStream (@langchain/langgraph-sdk/react), as a
// team's app would be: it talks to the API given as ?api=URL from another origin, sends a
// question to the `chat` agent (stopping before its tools: interruptBefore), shows the
// messages as they stream, the pending tool call with an Approve button, and the answer.
// The thread id is kept in sessionStorage, so a reload reopens the thread. Built by
// esbuild in tests/web/usestream.mjs; everything the test reads is a data-testid.
import { useStream } from "@langchain/langgraph-sdk/react";
import { useEffect, useState } from "react";
import { createRoot } from "react-dom/client";

const api = new URLSearchParams(location.search).get("api");
window.__seen = {}; // message id -> the contents it was rendered with, in order

const text = (m) => (typeof m.content === "string" ? m.content : JSON.stringify(m.content));

function App() {
  const [threadId, setThreadId] = useState(sessionStorage.getItem("thread") || null);
  const stream = useStream({
    apiUrl: api,
    assistantId: "chat",
    messagesKey: "messages",
    threadId,
    onThreadId: (id) => {
      sessionStorage.setItem("thread", id);
      setThreadId(id);
    },
  });
  const msgs = stream.messages || [];
  useEffect(() => {
    for (const m of msgs) {
      const seen = (window.__seen[m.id] ??= []);
      if (seen.at(-1) !== text(m)) seen.push(text(m));
    }
  }, [msgs]);
  const last = msgs.at(-1);
  const pending = !stream.isLoading && last && last.type === "ai" && (last.tool_calls || []).length > 0;
  return (
    <main>
      <h1>useStream on superstep serve</h1>
      <ul data-testid="messages">
        {msgs.map((m) => (
          <li key={m.id} data-testid="message" data-type={m.type} data-id={m.id}>
            <b>{m.type}</b>: <span data-testid="content">{text(m)}</span>
            {(m.tool_calls || []).map((tc) => (
              <code key={tc.id} data-testid="tool-call">{`${tc.name}(${JSON.stringify(tc.args)})`}</code>
            ))}
          </li>
        ))}
      </ul>
      <button data-testid="send" disabled={stream.isLoading}
        onClick={() => stream.submit({ messages: [{ type: "human", content: "What is 2 + 40?" }] }, { interruptBefore: ["tool"] })}>
        Send
      </button>
      {pending && <button data-testid="approve" onClick={() => stream.submit(null)}>Approve add</button>}
      <p data-testid="status">{stream.isLoading ? "loading" : "idle"}</p>
      <p data-testid="thread">{threadId || ""}</p>
      {stream.error ? <p data-testid="error">{String(stream.error.message || stream.error)}</p> : null}
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
