"""A supervisor routing between two agent subgraphs, with no LLM (the Python twin of
examples/lua/supervisor.lua; docs/subgraphs.md):

  researcher  a tool loop driven by a scripted model: model -> tools -> model ...
              until it answers, then hands off to the writer with
              Command(graph=Command.PARENT) (its conversation stays private)
  writer      drafts from the findings and asks a human for approval with
              interrupt() inside the subgraph; any other answer than "approve"
              is feedback and the writer drafts again
  supervisor  decides who works next and when the task is done

Every superstep is a checkpoint in a SQLite file, so one process starts the run
and another resumes it:

  python3 examples/python/supervisor.py --db sv.db --thread t1 start "durable graphs"
  python3 examples/python/supervisor.py --db sv.db --thread t1 state
  python3 examples/python/supervisor.py --db sv.db --thread t1 resume approve

Each node says what it does on stderr; the resume shows that only the writer's
approval step runs again.
"""

import argparse
import json
import operator
import sys
from typing import Annotated, TypedDict

from superstep.checkpoint import SqliteSaver
from superstep.graph import END, START, MessagesState, StateGraph
from superstep.messages import AIMessage, HumanMessage, ToolMessage
from superstep.types import Command, interrupt


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


# ---- the researcher: a ReAct loop ------------------------------------------------------

TOOLS = {
    "search": lambda args: f"3 articles on {args['query']}",
    "read": lambda args: f"{args['url']}: checkpoints make long runs resumable",
}


def call(id: str, name: str, args: dict) -> dict:
    return {"id": id, "name": name, "args": args, "type": "tool_call"}


# The scripted model: reply k of the conversation is SCRIPT[k] (with a real model,
# create_react_agent(ChatOpenAI(...), tools) can be the researcher node instead).
SCRIPT = [
    lambda task: AIMessage("", tool_calls=[call("c1", "search", {"query": task})]),
    lambda task: AIMessage("", tool_calls=[
        call("c2", "read", {"url": "https://example.org/" + task.replace(" ", "-")})]),
    lambda task: AIMessage(f"Done researching {task}."),
]


class ResearchState(MessagesState):
    task: str  # shared with the supervisor; messages stay private (it declares none)


def model(state: ResearchState) -> dict:
    msgs = state.get("messages", [])
    turn = 1 + sum(1 for m in msgs if isinstance(m, AIMessage))
    reply = SCRIPT[turn - 1](state["task"])
    say(f"researcher/model: turn {turn}, {'calls a tool' if reply.tool_calls else 'answers'}")
    if not msgs:  # the first turn also records the question
        return {"messages": [HumanMessage(f"Research: {state['task']}"), reply]}
    return {"messages": [reply]}


def tools(state: ResearchState) -> dict:
    out = []
    for c in state["messages"][-1].tool_calls:
        result = TOOLS[c["name"]](c["args"])
        say(f"researcher/tools: {c['name']} -> {result}")
        out.append(ToolMessage(result, tool_call_id=c["id"]))
    return {"messages": out}


def handoff(state: ResearchState) -> Command:
    """Ends the researcher and routes in the supervisor's graph: only this update
    reaches the parent (the subgraph's own state does not)."""
    tool_msgs = [m.content for m in state["messages"] if isinstance(m, ToolMessage)]
    findings = tool_msgs + [state["messages"][-1].content]
    say(f"researcher/handoff: {len(findings)} findings -> writer")
    return Command(graph=Command.PARENT, goto="writer",
                   update={"findings": findings, "tool_calls": len(tool_msgs)})


def after_model(state: ResearchState) -> str:
    return "tools" if state["messages"][-1].tool_calls else "handoff"


researcher = StateGraph(ResearchState)
researcher.add_node("model", model)
researcher.add_node("tools", tools)
researcher.add_node("handoff", handoff)
researcher.add_edge(START, "model")
researcher.add_conditional_edges("model", after_model, ["tools", "handoff"])
researcher.add_edge("tools", "model")


# ---- the writer: draft, then a human approves ------------------------------------------

class WriterState(TypedDict, total=False):
    findings: list
    draft: str
    feedback: str
    approved: bool


def draft(state: WriterState) -> dict:
    text = "Report: " + " / ".join(state["findings"])
    if state.get("feedback"):
        text += f" (revised: {state['feedback']})"
    say(f"writer/draft: {text}")
    return {"draft": text}


def review(state: WriterState) -> dict:
    """interrupt() inside a subgraph stops the whole run; the resume answers it and
    the writer continues from its own checkpoint (draft does not run again)."""
    answer = interrupt({"question": "Approve this draft?", "draft": state["draft"]})
    say(f"writer/review: {json.dumps(answer)}")
    if answer == "approve":
        return {"approved": True}
    return {"approved": False, "feedback": str(answer)}


writer = StateGraph(WriterState)
writer.add_node("draft", draft)
writer.add_node("review", review)
writer.add_edge(START, "draft")
writer.add_edge("draft", "review")
writer.add_edge("review", END)


# ---- the supervisor --------------------------------------------------------------------

class State(TypedDict, total=False):
    task: str
    findings: list
    tool_calls: Annotated[int, operator.add]
    draft: str
    feedback: str
    approved: bool


def route(state: State) -> str:
    go = ("researcher" if not state.get("findings") else
          END if state.get("approved") else "writer")
    say("supervisor: " + ("done" if go == END else f"next is {go}"))
    return go


def build(checkpointer):
    graph = StateGraph(State)
    graph.add_node("supervisor", lambda state: {})  # it decides in its router
    # A compiled graph as a node; the researcher's handoff may go to "writer".
    graph.add_node("researcher", researcher.compile(), destinations=("writer",))
    graph.add_node("writer", writer.compile())
    graph.add_edge(START, "supervisor")
    graph.add_conditional_edges("supervisor", route, ["researcher", "writer", END])
    graph.add_edge("writer", "supervisor")
    return graph.compile(checkpointer=checkpointer)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--db", default="supervisor.db")
    p.add_argument("--thread", default="supervisor-1")
    sub = p.add_subparsers(dest="cmd", required=True)
    sub.add_parser("start").add_argument("task")
    sub.add_parser("resume").add_argument("answer")
    sub.add_parser("state")
    args = p.parse_args()

    app = build(SqliteSaver(args.db))
    config = {"configurable": {"thread_id": args.thread}}
    if args.cmd == "state":
        snap = app.get_state(config)
        print("next:", json.dumps(list(snap.next)))
        print("interrupts:", json.dumps([i.value for i in snap.interrupts]))
        return
    if args.cmd == "start":
        out = app.invoke({"task": args.task}, config)
    else:
        out = app.invoke(Command(resume=args.answer), config)
    for it in out.pop("__interrupt__", []):
        print("interrupted:", json.dumps(it.value))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
