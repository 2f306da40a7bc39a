"""emitter, the Python twin of emitter.lua: node `emit` writes n custom stream events
{"i": 0..n-1} (n defaults to 1) and appends "emit" to `log`; then `done` appends
"done"."""
import operator
from typing import Annotated, TypedDict

from superstep.config import get_stream_writer
from superstep.graph import END, START, StateGraph


class State(TypedDict, total=False):
    n: int
    log: Annotated[list, operator.add]


def emit(state: State) -> dict:
    writer = get_stream_writer()
    for i in range(state.get("n") or 1):
        writer({"i": i})
    return {"log": ["emit"]}


builder = StateGraph(State)
builder.add_node("emit", emit)
builder.add_node("done", lambda state: {"log": ["done"]})
builder.add_edge(START, "emit")
builder.add_edge("emit", "done")
builder.add_edge("done", END)
graph = builder.compile()
