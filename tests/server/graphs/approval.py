"""approval, the Python twin of approval.lua: node `ask` calls interrupt({"question":
"ok?"}); on resume the resume value becomes `approved`. Served uncompiled (a
StateGraph: the server compiles it)."""
from typing import Any, TypedDict

from superstep.graph import END, START, StateGraph
from superstep.types import interrupt


class State(TypedDict, total=False):
    topic: Any
    approved: Any


def ask(state: State) -> dict:
    return {"approved": interrupt({"question": "ok?"})}


graph = StateGraph(State)
graph.add_node("ask", ask)
graph.add_edge(START, "ask")
graph.add_edge("ask", END)
