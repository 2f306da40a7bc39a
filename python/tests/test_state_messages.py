"""The messages of an add_messages field as nodes and routers receive them
(python/src/convert.c, sstpy_state_from_value): message objects made once and handed to
the next calls while the message is unchanged, as LangGraph hands a channel's objects to
every node; a new list each call; replaced and removed messages seen at once."""

from superstep.checkpoint import InMemorySaver
from superstep.graph import END, START, MessagesState, StateGraph
from superstep.messages import AIMessage, HumanMessage, RemoveMessage


def test_unchanged_messages_are_the_same_objects_in_later_nodes():
    seen = []

    def make(name):
        def node(state):
            seen.append((name, list(state["messages"])))
            state["messages"].append("not in the state")  # the node's own list
            return {"messages": [AIMessage(f"from {name}", id=name)]}

        return node

    g = StateGraph(MessagesState)
    for name in ("a", "b", "c"):
        g.add_node(name, make(name))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    out = g.compile(checkpointer=InMemorySaver()).invoke(
        {"messages": [HumanMessage("hi", id="h")]}, {"configurable": {"thread_id": "t"}})
    assert [m.content for m in out["messages"]] == ["hi", "from a", "from b", "from c"]
    (_, a), (_, b), (_, c) = seen
    assert [m.content for m in c] == ["hi", "from a", "from b"]
    assert all(isinstance(m, (HumanMessage, AIMessage)) for m in c)
    assert b[0] is a[0] and c[0] is a[0] and c[1] is b[1]  # made once


def test_replaced_and_removed_messages_are_seen_by_the_next_node():
    seen = []

    def first(state):
        return {"messages": [AIMessage("draft", id="x"), AIMessage("extra", id="y")]}

    def second(state):
        seen.append([m.content for m in state["messages"]])
        return {"messages": [AIMessage("final", id="x"), RemoveMessage(id="y")]}

    def third(state):
        seen.append([m.content for m in state["messages"]])
        return {}

    def route(state):
        seen.append(("route", [m.content for m in state["messages"]]))
        return "third"

    g = StateGraph(MessagesState)
    g.add_node("first", first)
    g.add_node("second", second)
    g.add_node("third", third)
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    g.add_conditional_edges("second", route, ["third"])
    g.add_edge("third", END)
    app = g.compile()
    for _ in range(2):  # a second invoke starts from the same objects' values
        seen.clear()
        app.invoke({"messages": [HumanMessage("q", id="q")]})
        assert seen == [["q", "draft", "extra"], ("route", ["q", "final"]), ["q", "final"]]
