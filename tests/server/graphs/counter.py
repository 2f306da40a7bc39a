"""counter, the Python twin of counter.lua: node `inc` adds 1 to `count` (sum, default
0) and loops back to itself until count >= n (n defaults to 1); `delay_ms` makes
every step sleep first."""
import operator
import time
from typing import Annotated, TypedDict

from superstep.graph import END, START, StateGraph


class State(TypedDict, total=False):
    n: int
    delay_ms: int
    count: Annotated[int, operator.add]


def inc(state: State) -> dict:
    d = state.get("delay_ms")
    if d:
        time.sleep(d / 1000)
    return {"count": 1}


def again(state: State) -> str:
    return END if state["count"] >= (state.get("n") or 1) else "inc"


builder = StateGraph(State)
builder.add_node("inc", inc)
builder.add_edge(START, "inc")
builder.add_conditional_edges("inc", again, ["inc", END])
graph = builder.compile()
