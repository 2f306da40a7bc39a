"""fanout, the Python twin of fanout.lua: `router` is a no-op; a conditional edge sends
n tasks Send("worker", {"i": 0..n-1}); each worker appends its i to `results`."""
import operator
from typing import Annotated, TypedDict

from superstep.graph import END, START, StateGraph
from superstep.types import Send


class State(TypedDict, total=False):
    n: int
    results: Annotated[list, operator.add]


def sends(state: State) -> list:
    return [Send("worker", {"i": i}) for i in range(state.get("n") or 0)]


builder = StateGraph(State)
builder.add_node("router", lambda state: {})
builder.add_node("worker", lambda arg: {"results": [arg["i"]]})
builder.add_edge(START, "router")
builder.add_conditional_edges("router", sends, ["worker"])
builder.add_edge("worker", END)
graph = builder.compile()
