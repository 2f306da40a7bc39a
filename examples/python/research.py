"""A durable research-style workflow that needs no LLM (the Python twin of
examples/lua/research.lua):

  plan      splits the topic into questions
  research  runs once per question, in parallel (Send fan-out)
  fetch     a flaky source that fails on its first attempt and is retried
  approve   waits for a human (interrupt) before the report is written
  report    joins research and fetch (waits for both) and writes the summary

Every superstep is a checkpoint in a SQLite file, so the run started by one
process is resumed by another:

  python3 examples/python/research.py --db research.db --thread t1 start "durable graphs"
  python3 examples/python/research.py --db research.db --thread t1 resume yes
"""

import argparse
import json
import operator
from typing import Annotated, TypedDict

from superstep.checkpoint import SqliteSaver
from superstep.graph import END, START, StateGraph
from superstep.types import Command, RetryPolicy, Send, interrupt


class State(TypedDict):
    topic: str
    questions: list
    notes: Annotated[list, operator.add]
    sources: Annotated[list, operator.add]
    approved: bool
    report: str


def plan(state: State) -> dict:
    return {"questions": [f"{state['topic']}: {a}" for a in ("history", "design", "costs")]}


def research(question: str) -> dict:  # a Send's argument is the node's input
    return {"notes": [f"notes on {question}"]}


_attempts = {}


def fetch(state: State) -> dict:
    # Fails on its first attempt, as a flaky network source would; the retry
    # policy runs it again.
    _attempts[state["topic"]] = _attempts.get(state["topic"], 0) + 1
    if _attempts[state["topic"]] == 1:
        raise ConnectionError("source temporarily unavailable")
    return {"sources": ["archive.example/" + state["topic"].replace(" ", "-")]}


def approve(state: State) -> dict:
    answer = interrupt({"question": "publish the report?", "notes": len(state["notes"])})
    return {"approved": answer == "yes"}


def report(state: State) -> dict:
    if not state["approved"]:
        return {"report": "not approved"}
    return {
        "report": f"{state['topic']}: {len(state['notes'])} notes "
        f"from {len(state['sources'])} sources"
    }


def build(checkpointer):
    graph = StateGraph(State)
    graph.add_node("plan", plan)
    graph.add_node("research", research)
    graph.add_node("fetch", fetch,
                   retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.01, jitter=False))
    graph.add_node("approve", approve)
    graph.add_node("report", report)
    graph.add_edge(START, "plan")
    graph.add_conditional_edges("plan", lambda s: [Send("research", q) for q in s["questions"]])
    graph.add_edge(START, "fetch")
    graph.add_edge(["research", "fetch"], "approve")
    graph.add_edge("approve", "report")
    graph.add_edge("report", END)
    return graph.compile(checkpointer=checkpointer)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", default="research.db")
    p.add_argument("--thread", default="research-1")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("start").add_argument("topic")
    sub.add_parser("resume").add_argument("answer")
    args = p.parse_args()

    app = build(SqliteSaver(args.db))
    config = {"configurable": {"thread_id": args.thread}}
    if args.cmd == "start":
        out = app.invoke({"topic": args.topic}, config)
    else:
        out = app.invoke(Command(resume=args.answer), config)
    for it in out.pop("__interrupt__", []):
        print("interrupted:", json.dumps(it.value))
    print(json.dumps(out))
    state = app.get_state(config)
    print("next:", list(state.next))


if __name__ == "__main__":
    main()
