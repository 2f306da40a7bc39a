"""chain, the Python twin of chain.lua: a -> b -> c, each node appends its own name to
`items` (append, default []). A function returning the graph, as LangGraph's config
allows ("./chain.py:make_graph")."""
import operator
from typing import Annotated, TypedDict

from superstep.graph import END, START, StateGraph


class State(TypedDict, total=False):
    items: Annotated[list, operator.add]


def appender(name: str):
    def node(state: State) -> dict:
        return {"items": [name]}
    return node


def make_graph():
    builder = StateGraph(State)
    for name in ("a", "b", "c"):
        builder.add_node(name, appender(name))
    builder.add_edge(START, "a")
    builder.add_edge("a", "b")
    builder.add_edge("b", "c")
    builder.add_edge("c", END)
    return builder.compile()
