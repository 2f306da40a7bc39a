"""nested, the Python twin of nested.lua: a compiled graph as a node (stream_subgraphs:
"updates|child:<task id>"). The child's node `work` sets `result` from `topic`; the
parent then runs `finish`, which appends "finish" to `log`."""
import operator
from typing import Annotated, Any, TypedDict

from superstep.graph import END, START, StateGraph


class Child(TypedDict, total=False):
    result: Any  # in the order the Lua twin's fields come (sorted)
    topic: Any


class Parent(TypedDict, total=False):
    log: Annotated[list, operator.add]
    result: Any
    topic: Any


child = StateGraph(Child)
child.add_node("work", lambda state: {"result": "done:" + state["topic"]})
child.add_edge(START, "work")
child.add_edge("work", END)

builder = StateGraph(Parent)
builder.add_node("child", child.compile())
builder.add_node("finish", lambda state: {"log": ["finish"]})
builder.add_edge(START, "child")
builder.add_edge("child", "finish")
builder.add_edge("finish", END)
graph = builder.compile()
