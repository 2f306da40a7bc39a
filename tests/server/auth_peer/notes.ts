// The twin of examples/auth/notes.lua for LangGraph.js's server: each run appends its input's
// `note` to `notes`, signed with the user the run belongs to
// (config.configurable.langgraph_auth_user, which both servers set).
import { Annotation, END, START, StateGraph } from "@langchain/langgraph";

const State = Annotation.Root({
  note: Annotation<string | undefined>(),
  notes: Annotation<string[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
  by: Annotation<string | undefined>(),
});

export const notes = new StateGraph(State)
  .addNode("take", (state, config) => {
    const user = (config?.configurable as any)?.langgraph_auth_user ?? {};
    const who = user.identity ?? "anonymous";
    return { notes: [`${who}: ${String(state.note ?? "")}`], by: who };
  })
  .addEdge(START, "take")
  .addEdge("take", END)
  .compile();
