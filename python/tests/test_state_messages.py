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


def test_nodes_on_several_workers_read_messages_at_once():
    """Four nodes a superstep on four workers, each reading the history while the others
    convert it too (the kept objects are shared under the GIL). Run under ThreadSanitizer
    in the tsan build (test_python_threads)."""
    import time

    rounds = 6

    def make(i):
        def node(state):
            msgs = state["messages"]
            time.sleep(0)  # let the others take the GIL in between
            n = len(msgs)
            assert [m.content for m in msgs] == [m.content for m in state["messages"]]
            return {"messages": [AIMessage(f"{i}:{n}", id=f"{i}-{n}")]}

        return node

    def again(state):
        return [f"n{i}" for i in range(4)] if len(state["messages"]) < 1 + 4 * rounds else END

    g = StateGraph(MessagesState)
    g.add_node("fan", lambda s: {})
    for i in range(4):
        g.add_node(f"n{i}", make(i))
        g.add_edge(f"n{i}", "fan")
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", again, [f"n{i}" for i in range(4)] + [END])
    out = g.compile(workers=4).invoke({"messages": [HumanMessage("go", id="go")]},
                                      {"recursion_limit": 100})
    got = [m.content for m in out["messages"]]
    assert len(got) == 1 + 4 * rounds
    assert got[1:5] == ["0:1", "1:1", "2:1", "3:1"]  # task order, each saw the same history
    assert got[-4:] == [f"{i}:{1 + 4 * (rounds - 1)}" for i in range(4)]
