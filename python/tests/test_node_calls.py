"""How a node that takes the state alone is called (graph.py _Node._call_plain): the run's
config and store are what get_config() and get_store() give inside it, also around a graph
invoked inside it, and nothing is left behind after it."""

import operator
from typing import Annotated, TypedDict

import pytest

from superstep.config import get_config, get_store
from superstep.graph import END, START, StateGraph
from superstep.types import Command


class S(TypedDict):
    log: Annotated[list, operator.add]


def test_get_config_in_plain_nodes_and_around_a_nested_invoke():
    inner = StateGraph(S)
    inner.add_node("i", lambda s: {"log": [get_config()["configurable"]["who"]]})
    inner.add_edge(START, "i")
    inner.add_edge("i", END)
    inner_app = inner.compile()

    def outer_node(state):
        before = get_config()["configurable"]["who"]
        got = inner_app.invoke({"log": []})["log"]
        after = get_config()["configurable"]["who"]
        return {"log": [before, *got, after, get_store()]}

    g = StateGraph(S)
    g.add_node("o", outer_node)
    g.add_edge(START, "o")
    g.add_edge("o", END)
    out = g.compile().invoke({"log": []}, {"configurable": {"who": "outer"}})
    # (a graph invoked inside a node runs as its subgraph, with the node's config)
    assert out["log"] == ["outer", "outer", "outer", None]
    with pytest.raises(RuntimeError, match="outside of a runnable context"):
        get_config()


def test_plain_node_results_other_than_a_dict():
    g = StateGraph(S)
    g.add_node("a", lambda s: Command(update={"log": ["a"]}, goto="b"))
    g.add_node("b", lambda s: None)
    g.add_node("c", lambda s: [{"log": ["c1"]}, {"log": ["c2"]}])
    g.add_edge(START, "a")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    assert g.compile().invoke({"log": []})["log"] == ["a", "c1", "c2"]
