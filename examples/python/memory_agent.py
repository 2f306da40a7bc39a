"""Long-term memory for an agent (the Python twin of examples/lua/memory_agent.lua):
LangMem's manage_memory and search_memory tools over a store, so an agent remembers
a fact across two conversations (threads) of the same user.

  thread 1  the user says "my favourite colour is teal"; the model calls
            manage_memory, which stores the fact under ("memories", user_id)
  thread 2  a new thread, the same user_id: the model calls search_memory, reads
            the memory back, and answers with the colour

The agent is LangGraph's shape written out (a model node, a ToolNode, tools_condition)
and the tools take the store by InjectedStore(), as LangMem's do. The model is scripted
(examples/agent/memory_replies.jsonl), so the run needs no network; with a real one
(ChatOpenAI("gpt-4o-mini"), ChatAnthropic("claude-sonnet-4-5")) the same agent decides
for itself when to remember and when to search.

  python3 examples/python/memory_agent.py [--user u1]

prints what thread 2 recalled and the answer (the conversations go to stderr).
"""

import argparse
import json
import os
import sys
import uuid
from typing import Annotated, Any, Literal

from superstep.chat_models import ChatScripted
from superstep.checkpoint import InMemorySaver
from superstep.graph import START, MessagesState, StateGraph
from superstep.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from superstep.prebuilt import InjectedState, InjectedStore, ToolNode, tools_condition
from superstep.store import InMemoryStore
from superstep.tools import tool

HERE = os.path.dirname(os.path.abspath(__file__))


class State(MessagesState):
    user_id: str


@tool
def manage_memory(content: str, action: Literal["create", "update", "delete"] = "create",
                  id: str = "", *, user_id: Annotated[str, InjectedState("user_id")],
                  store: Annotated[Any, InjectedStore()]) -> str:
    """Create, update or delete a memory to keep across conversations.

    Args:
        content: the memory's text
        action: create, update or delete
        id: the memory to update or delete
    """
    ns = ("memories", user_id)
    if action == "delete":
        store.delete(ns, id)
        return json.dumps({"status": "deleted", "id": id}, separators=(",", ":"))
    key = id if action == "update" and id else str(uuid.uuid4())
    store.put(ns, key, {"content": content})
    status = "updated" if action == "update" else "created"
    return json.dumps({"status": status, "id": key}, separators=(",", ":"))


@tool
def search_memory(query: str, limit: int = 10, *,
                  user_id: Annotated[str, InjectedState("user_id")],
                  store: Annotated[Any, InjectedStore()]) -> str:
    """Search the memories of this user.

    Args:
        query: what to look for
        limit: the most memories to return
    """
    items = store.search(("memories", user_id), query=query, limit=limit)
    return json.dumps([{"namespace": list(it.namespace), "key": it.key, "value": it.value}
                       for it in items], separators=(",", ":"))


TOOLS = [manage_memory, search_memory]
# The scripted model: one reply per call, in order, from the file (both threads').
llm = ChatScripted(os.path.join(HERE, "..", "agent", "memory_replies.jsonl")).bind_tools(TOOLS)
PROMPT = SystemMessage("You are a helpful assistant with a long-term memory.")


def model(state: State) -> dict:
    return {"messages": [llm.invoke([PROMPT] + state["messages"])]}


def build(store, checkpointer):
    g = StateGraph(State)
    g.add_node("model", model)
    g.add_node("tools", ToolNode(TOOLS))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", tools_condition)
    g.add_edge("tools", "model")
    return g.compile(checkpointer=checkpointer, store=store)


def show(thread: str, messages: list) -> tuple:
    """Prints a conversation turn; returns the last reply and the tool results."""
    print(f"{thread}:", file=sys.stderr)
    results = []
    for m in messages:
        if isinstance(m, ToolMessage):
            results.append(m.content)
            print(f"  {m.name or 'tool':<9} {m.content}", file=sys.stderr)
        elif isinstance(m, AIMessage) and m.tool_calls:
            for c in m.tool_calls:
                args = json.dumps(c["args"], separators=(",", ":"))
                print(f"  assistant calls {c['name']} {args}", file=sys.stderr)
        else:
            print(f"  {m.type:<9} {m.content}", file=sys.stderr)
    return messages[-1].content, results


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--user", default="u1")
    args = p.parse_args()

    # InMemoryStore lives as long as the process; SqliteStore("memories.db") keeps the
    # memories on disk (the file may be the checkpoint database).
    agent = build(InMemoryStore(), InMemorySaver())  # each conversation is a thread

    def chat(thread: str, text: str) -> list:
        out = agent.invoke({"messages": [HumanMessage(text)], "user_id": args.user},
                           {"configurable": {"thread_id": thread}})
        return out["messages"][1:]  # the reply: what followed the user's message

    _, created = show("thread 1", chat("chat-1", "My favourite colour is teal."))
    if not created or '"status":"created"' not in created[0]:
        sys.exit("manage_memory created nothing")
    answer, found = show("thread 2", chat("chat-2", "What is my favourite colour?"))
    recalled = found[0] if found else ""
    # The colour in the answer is the one the memory search returned.
    memories = json.loads(recalled) if recalled else []
    colour = memories[0]["value"]["content"].split()[-1].rstrip(".") if memories else None
    if not colour or colour not in answer:
        sys.exit("the answer does not use the recalled memory")
    print(json.dumps({"user_id": args.user, "recalled": recalled, "answer": answer}))


if __name__ == "__main__":
    main()
