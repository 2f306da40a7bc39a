"""superstep's own tests of the Python binding: values, errors, the GIL and
threads, and reference leaks (docs/python.md)."""

import gc
import json
import operator
import os
import sys
import tempfile
import threading
import time
from typing import Annotated, TypedDict

import pytest

from superstep.checkpoint import InMemorySaver, SqliteSaver
from superstep.errors import GraphRecursionError, InvalidUpdateError, NodeError, SuperstepError
from superstep.graph import END, START, StateGraph, add_messages
from superstep.messages import AIMessage, HumanMessage, RemoveMessage, ToolMessage
from superstep.types import Command, RetryPolicy, Send, interrupt


class State(TypedDict):
    n: Annotated[int, operator.add]
    items: Annotated[list, operator.add]
    note: str


def _chain():
    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": 1, "items": ["a"]})
    g.add_node("b", lambda s: {"n": 2, "items": ["b"], "note": "x"})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", END)
    return g.compile()


def test_values_round_trip():
    g = StateGraph(State)
    payload = {"s": "é\u2028", "i": -(2**63), "f": 1.5, "b": True, "z": None, "l": [1, [2]],
               "t": (1, 2)}
    g.add_node("a", lambda s: {"note": payload})
    g.add_edge(START, "a")
    out = g.compile().invoke({"n": 1})
    assert out["note"] == {**payload, "t": [1, 2]}
    assert out["n"] == 1 and out["items"] == []


def test_unsupported_value_names_its_path():
    g = StateGraph(State)
    g.add_node("a", lambda s: {"note": {"k": [1, {2, 3}]}})
    g.add_edge(START, "a")
    with pytest.raises(TypeError, match=r"\['note'\]\['k'\]\[1\]: cannot store a set"):
        g.compile().invoke({"n": 1})
    with pytest.raises(TypeError, match=r"input\['note'\]: cannot store a object"):
        g.compile().invoke({"note": object()})
    with pytest.raises(OverflowError):
        g.compile().invoke({"n": 2**64})


def test_node_exception_is_the_same_object():
    class Boom(Exception):
        pass

    raised = []

    def node(state):
        e = Boom("node failed")
        raised.append(e)
        raise e

    g = StateGraph(State)
    g.add_node("a", node)
    g.add_edge(START, "a")
    with pytest.raises(Boom, match="node failed") as info:
        g.compile().invoke({"n": 1})
    assert info.value is raised[0]
    assert info.value.__traceback__ is not None


def test_router_and_reducer_exceptions():
    def router(state):
        raise KeyError("route")

    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    g.add_conditional_edges("a", router)
    with pytest.raises(KeyError, match="route"):
        g.compile().invoke({"n": 0})

    def bad(a, b):
        raise ZeroDivisionError("reducer")

    class S2(TypedDict):
        x: Annotated[str, bad]

    g = StateGraph(S2)
    g.add_node("a", lambda s: {"x": "y"})
    g.add_edge(START, "a")
    with pytest.raises(ZeroDivisionError, match="reducer"):
        g.compile().invoke({})


def test_builtin_and_custom_reducers():
    def concat(a, b):
        return (a or "") + b

    class S(TypedDict):
        total: Annotated[float, operator.add]
        text: Annotated[str, concat]
        msgs: Annotated[list, add_messages]
        plain: int

    g = StateGraph(S)
    g.add_node("a", lambda s: {"total": 0.5, "text": "a", "msgs": [{"role": "user", "content": "hi", "id": "1"}]})
    g.add_node("b", lambda s: {"total": 1, "text": "b", "msgs": [{"role": "ai", "content": "yo", "id": "1"}]})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    out = g.compile().invoke({"total": 1.0, "text": ">"})
    assert out["total"] == 2.5
    assert out["text"] == ">ab"
    assert out["msgs"] == [AIMessage("yo", id="1")]  # normalised, a message object in Python

    g = StateGraph(S)
    g.add_node("a", lambda s: {"plain": 1})
    g.add_node("b", lambda s: {"plain": 2})
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    with pytest.raises(InvalidUpdateError):
        g.compile().invoke({})


def test_recursion_limit():
    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    g.add_edge("a", "a")
    with pytest.raises(GraphRecursionError):
        g.compile().invoke({"n": 0}, {"recursion_limit": 5})


def test_retry_policy_and_send():
    calls = []

    def flaky(arg):
        calls.append(arg["i"])
        if calls.count(arg["i"]) < 2:
            raise ConnectionError("flaky")
        return {"items": [arg["i"]]}

    g = StateGraph(State)
    g.add_node("fan", lambda s: {})
    g.add_node("work", flaky, retry_policy=RetryPolicy(initial_interval=0.01, jitter=False))
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("work", {"i": i}) for i in range(3)])
    out = g.compile().invoke({"n": 0})
    assert out["items"] == [0, 1, 2]
    assert sorted(calls) == [0, 0, 1, 1, 2, 2]

    g = StateGraph(State)
    g.add_node("w", lambda s: (_ for _ in ()).throw(ValueError("no retry")),
               retry_policy=RetryPolicy(initial_interval=0.01))
    g.add_edge(START, "w")
    with pytest.raises(ValueError, match="no retry"):
        g.compile().invoke({"n": 0})


def test_interrupt_resume_across_savers(tmp_path):
    path = str(tmp_path / "t.db")

    def build(saver):
        g = StateGraph(State)

        def ask(s):
            answer = interrupt({"question": "ok?"})
            return {"note": answer}

        g.add_node("ask", ask)
        g.add_edge(START, "ask")
        return g.compile(checkpointer=saver)

    cfg = {"configurable": {"thread_id": "t"}}
    first = build(SqliteSaver(path)).invoke({"n": 1}, cfg)
    assert first["__interrupt__"][0].value == {"question": "ok?"}
    out = build(SqliteSaver(path)).invoke(Command(resume="yes"), cfg)
    assert out == {"n": 1, "items": [], "note": "yes"}


def test_gil_is_released_during_invoke():
    """Another Python thread runs while invoke() is under way: the node waits
    until that thread has ticked ten times (no wall time; a held GIL would make
    the wait run out and the node answer n = 0)."""
    enough = threading.Event()
    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": 1 if enough.wait(timeout=120) else 0})
    g.add_edge(START, "a")
    app = g.compile()
    ticks = []
    stop = threading.Event()

    def ticker():
        while not stop.is_set():
            ticks.append(1)
            if len(ticks) >= 10:
                enough.set()
            time.sleep(0.001)

    t = threading.Thread(target=ticker)
    t.start()
    out = app.invoke({"n": 0})
    stop.set()
    t.join()
    assert out["n"] == 1
    assert len(ticks) >= 10


def test_parallel_nodes_on_workers():
    """Nodes of one superstep run on several workers: sleeps (GIL released) overlap.
    Run under ThreadSanitizer in the tsan build."""
    active = []
    peak = []
    lock = threading.Lock()

    def make(name):
        def node(state):
            with lock:
                active.append(name)
                peak.append(len(active))
            time.sleep(0.2)
            with lock:
                active.remove(name)
            return {"items": [name], "n": 1}

        return node

    g = StateGraph(State)
    for i in range(4):
        g.add_node(f"p{i}", make(f"p{i}"))
        g.add_edge(START, f"p{i}")
    app = g.compile(workers=4)
    for _ in range(3):
        out = app.invoke({"n": 0})
        assert out["items"] == ["p0", "p1", "p2", "p3"]  # task order, not finish order
        assert out["n"] == 4
    assert max(peak) >= 2  # overlap, counted: no wall-time bound (busy machines, TSan)

    # several Python threads invoking one compiled graph at once
    errors = []

    def run():
        try:
            for _ in range(5):
                assert app.invoke({"n": 0})["n"] == 4
        except BaseException as e:  # pragma: no cover
            errors.append(e)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_stream_stops_early():
    g = StateGraph(State)
    g.add_node("a", lambda s: {"n": 1})
    g.add_edge(START, "a")
    g.add_edge("a", "a")
    app = g.compile()
    seen = []
    for chunk in app.stream({"n": 0}, {"recursion_limit": 1000}, stream_mode="values"):
        seen.append(chunk["n"])
        if len(seen) == 3:
            break
    assert seen == [0, 1, 2]


def _sub_in_function_app():
    class Sub(TypedDict):
        items: Annotated[list, operator.add]

    def ask(s):
        return {"items": ["ask:" + interrupt("ok?")]}

    sub = StateGraph(Sub)
    sub.add_node("ask", ask)
    sub.add_edge(START, "ask")
    sub = sub.compile()
    seen = []

    def call(s, config):
        seen.append(config["configurable"]["checkpoint_ns"])
        out = sub.invoke({"items": ["in"]})
        return {"items": out["items"], "n": 1}

    g = StateGraph(State)
    g.add_node("call", call)
    g.add_edge(START, "call")
    return g.compile(checkpointer=InMemorySaver()), seen


def test_subgraph_invoked_inside_a_node():
    # sub.invoke() in a node runs as a subgraph of that node (sst_node_run_subgraph): it
    # checkpoints under the node's namespace, its interrupt is the run's, and the resume
    # continues it there.
    app, seen = _sub_in_function_app()
    cfg = {"configurable": {"thread_id": "t"}}
    out = app.invoke({"n": 0}, cfg)
    assert [i.value for i in out["__interrupt__"]] == ["ok?"]
    snap = app.get_state(cfg, subgraphs=True)
    assert snap.next == ("call",)
    sub_state = snap.tasks[0].state
    assert sub_state.values == {"items": ["in"]}
    assert sub_state.config["configurable"]["checkpoint_ns"].startswith("call:")
    assert seen[0].startswith("call:")
    out = app.invoke(Command(resume="yes"), cfg)
    assert out["items"] == ["in", "ask:yes"] and out["n"] == 1
    # Outside a node, the same compiled graph runs on its own.
    assert app.get_state(cfg).next == ()


def test_parent_command_from_subgraph_invoked_inside_a_node():
    class Sub(TypedDict):
        items: Annotated[list, operator.add]

    def leave(s):
        return Command(graph=Command.PARENT, update={"note": "from child"}, goto="done")

    sub = StateGraph(Sub)
    sub.add_node("leave", leave)
    sub.add_edge(START, "leave")
    sub = sub.compile()
    after = []

    def call(s):
        sub.invoke({"items": []})
        after.append("ran on")  # never: the ParentCommand ends the node
        return {"n": 100}

    g = StateGraph(State)
    g.add_node("call", call, destinations=("done",))
    g.add_node("done", lambda s: {"items": [s["note"]]})
    g.add_edge(START, "call")
    out = g.compile().invoke({"n": 1})
    assert out == {"n": 1, "items": ["from child"], "note": "from child"}
    assert after == []


class Msgs(TypedDict):
    messages: Annotated[list, add_messages]
    other: list


def test_message_objects_round_trip():
    # Message objects become the engine's message dicts (OpenAI form) and the
    # add_messages field comes back as objects of the class the role names.
    calls = [{"name": "add", "args": {"a": 1}, "id": "c1", "type": "tool_call"}]
    seen = []

    def agent(s):
        seen.append(s["messages"])
        return {"messages": [AIMessage("", id="a1", tool_calls=calls)],
                "other": [HumanMessage("kept as a dict", id="o")]}

    def tool(s):
        return {"messages": [ToolMessage("2", tool_call_id="c1", id="t1")]}

    g = StateGraph(Msgs)
    g.add_node("agent", agent)
    g.add_node("tool", tool)
    g.add_edge(START, "agent")
    g.add_edge("agent", "tool")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "m"}}
    out = app.invoke({"messages": [("user", "hi")]}, cfg)
    assert [type(m) for m in seen[0]] == [HumanMessage]
    h = out["messages"][0]
    assert h.content == "hi" and h.type == "human" and isinstance(h.id, str)
    assert out["messages"][1:] == [AIMessage("", id="a1", tool_calls=calls),
                                   ToolMessage("2", tool_call_id="c1", id="t1")]
    assert out["other"] == [{"role": "user", "content": "kept as a dict", "id": "o"}]
    # stored in the engine's form: what the CLI and the server read
    import json
    stored = json.loads(_core_to_json(app.get_state(cfg).values["messages"][1]))
    assert stored["tool_calls"] == [{"id": "c1", "type": "function",
                                     "function": {"name": "add", "arguments": '{"a": 1}'}}]
    assert stored["role"] == "assistant"
    # RemoveMessage through update_state
    app.update_state(cfg, {"messages": [RemoveMessage(id="a1")]})
    assert [m.id for m in app.get_state(cfg).values["messages"]][1:] == ["t1"]


def _core_to_json(v):
    from superstep import _core

    return _core.to_json(v)


def test_langchain_like_messages_are_duck_typed():
    class Foreign:  # what langchain_core's messages look like (pydantic models)
        type = "ai"

        def __init__(self, content, id):
            self.content, self.id = content, id

        def model_dump(self):
            return {"content": self.content, "id": self.id, "type": self.type, "name": None}

    assert add_messages([], [Foreign("x", "1")]) == [AIMessage("x", id="1")]
    with pytest.raises(TypeError, match=r"right\[0\]: cannot store a object"):
        add_messages([], [object()])


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_checkpoint_tuples(kind, tmp_path):
    saver = InMemorySaver() if kind == "memory" else SqliteSaver(str(tmp_path / "t.db"))
    app, _ = _sub_in_function_app()
    app = app.builder.compile(checkpointer=saver)
    cfg = {"configurable": {"thread_id": "t", "who": "me"}}
    app.invoke({"n": 0}, cfg)
    tuples = list(saver.list({"configurable": {"thread_id": "t"}}))
    root = [t for t in tuples if t.config["configurable"]["checkpoint_ns"] == ""]
    sub = [t for t in tuples if t.config["configurable"]["checkpoint_ns"] != ""]
    assert [t.metadata["source"] for t in root] == ["loop", "input"]
    assert root[0].metadata["who"] == "me" and root[0].metadata["step"] == 0
    assert root[0].parent_config == root[1].config and root[1].parent_config is None
    assert sub and all(t.config["configurable"]["checkpoint_ns"].startswith("call:") for t in sub)
    latest = saver.get_tuple({"configurable": {"thread_id": "t"}})
    assert latest == root[0]
    head = app.get_state(cfg).config["configurable"]["checkpoint_id"]
    assert latest.config["configurable"]["checkpoint_id"] == head
    assert saver.get(root[1].config)["id"] == root[1].config["configurable"]["checkpoint_id"]
    assert len(list(saver.list({"configurable": {"thread_id": "t"}}, limit=1))) == 1
    assert [t.config for t in saver.list({"configurable": {"thread_id": "t"}},
                                         before=root[0].config)] == [root[1].config]
    assert [t.metadata["source"] for t in saver.list(
        {"configurable": {"thread_id": "t", "checkpoint_ns": ""}},
        filter={"source": "input"})] == ["input"]
    assert saver.get_tuple({"configurable": {"thread_id": "none"}}) is None


def test_error_handlers():
    """A handler gets the failed node's very exception, a Send task's arg, the run's
    config by position; after the exception left the process (the handler that took it
    failed) a resume gets the engine's error with its text."""
    boom = ValueError("boom")
    seen = []

    def fails(s):
        raise boom

    def handler(s, err: NodeError, cfg):
        seen.append((s, err.node, err.error, cfg["configurable"].get("thread_id")))
        if len(seen) == 2:
            raise RuntimeError("handler failed")
        return {"items": ["handled"]}

    g = StateGraph(State)
    g.add_node("fan", lambda s: None)
    g.add_node("w", fails, error_handler=handler)
    g.add_edge(START, "fan")
    g.add_conditional_edges("fan", lambda s: [Send("w", {"arg": 1})])
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "h1"}}
    assert app.invoke({"n": 0}, cfg)["items"] == ["handled"]
    assert seen[0][0] == {"arg": 1} and seen[0][1] == "w" and seen[0][2] is boom
    assert seen[0][3] == "h1"
    cfg2 = {"configurable": {"thread_id": "h2"}}
    with pytest.raises(RuntimeError, match="handler failed"):
        app.invoke({"n": 0}, cfg2)
    assert app.invoke(None, cfg2)["items"] == ["handled"]
    err = seen[2][2]
    assert isinstance(err, SuperstepError) and str(err) == "ValueError('boom')", repr(err)
    # set_node_defaults' retry applies to error handlers too; a node's own policy wins.
    tries = []

    def flaky_handler(s, error: NodeError):
        tries.append(error.node)
        if len(tries) < 3:
            raise ConnectionError("again")
        return {"note": "ok"}

    g = StateGraph(State).set_node_defaults(retry_policy=RetryPolicy(
        max_attempts=3, initial_interval=0.0, jitter=False))
    g.add_node("f", fails, error_handler=flaky_handler,
               retry_policy=RetryPolicy(max_attempts=1))
    g.add_edge(START, "f")
    assert g.compile().invoke({"n": 0})["note"] == "ok"
    assert tries == ["f", "f", "f"]
    # set_node_defaults(timeout=) is taken (test_timeout.py tests it)
    g = StateGraph(State)
    assert g.set_node_defaults(timeout=1.0) is g


def _counts():
    gc.collect()
    return len(gc.get_objects()), sys.getallocatedblocks()


def test_no_reference_leaks_over_10000_invokes():
    app = _chain()
    saver_app = None
    for _ in range(200):  # warm caches (type caches, interned strings)
        app.invoke({"n": 1, "note": "x"})
    objects0, blocks0 = _counts()
    for i in range(10_000):
        out = app.invoke({"n": i, "note": "x"})
    assert out["n"] == 9_999 + 3
    objects1, blocks1 = _counts()
    assert objects1 - objects0 < 100, (objects0, objects1)
    assert blocks1 - blocks0 < 1000, (blocks0, blocks1)

    # errors, interrupts and streams too
    g = StateGraph(State)

    def ask(s):
        if s["n"] % 2:
            raise RuntimeError("odd")
        return {"note": interrupt("q")}

    g.add_node("ask", ask)
    g.add_edge(START, "ask")
    saver_app = g.compile(checkpointer=InMemorySaver())
    extra = _leak_extras()
    for i in range(100):
        _cycle(saver_app, app, i, extra)
    objects0, blocks0 = _counts()
    for i in range(100, 1100):
        _cycle(saver_app, app, i, extra)
    objects1, blocks1 = _counts()
    assert objects1 - objects0 < 100, (objects0, objects1)
    assert blocks1 - blocks0 < 1000, (blocks0, blocks1)


def _leak_extras():
    """Message objects, a graph invoked inside a node, Command.PARENT, checkpoint tuples."""
    msgs = StateGraph(Msgs)
    msgs.add_node("a", lambda s: {"messages": [AIMessage("x", tool_calls=[
        {"name": "t", "args": {"k": [1]}, "id": "c"}])], "other": []})
    msgs.add_edge(START, "a")
    msgs = msgs.compile()

    class Sub(TypedDict):
        items: Annotated[list, operator.add]

    sub = StateGraph(Sub)
    sub.add_node("s", lambda s: {"items": ["s"]})
    sub.add_edge(START, "s")
    sub = sub.compile()
    leave = StateGraph(Sub)
    leave.add_node("l", lambda s: Command(graph=Command.PARENT, update={"note": "p"}, goto="b"))
    leave.add_edge(START, "l")
    leave = leave.compile()
    saver = InMemorySaver()
    parent = StateGraph(State)
    parent.add_node("a", lambda s: {"items": sub.invoke({"items": []})["items"]})
    parent.add_node("p", lambda s: leave.invoke({}), destinations=("b",))
    parent.add_node("b", lambda s: {"n": 1})
    parent.add_edge(START, "a")
    parent.add_edge("a", "p")
    parent = parent.compile(checkpointer=saver)

    # Error handlers: a node's own, the graph's default, and one that fails.
    def fails(s):
        raise ValueError(f"no {s['n']}")

    def handle(s, error: NodeError):
        return Command(update={"note": f"{error.node}: {error.error}"}, goto="b")

    def broken(s, error: NodeError):
        raise KeyError(error.node)

    handled = StateGraph(State).set_node_defaults(error_handler=broken)
    handled.add_node("f", fails, error_handler=handle, destinations=("b",))
    handled.add_node("b", lambda s: {"n": 1})
    handled.add_node("g", fails)
    handled.add_edge(START, "f")
    handled = handled.compile()
    only_default = StateGraph(State).set_node_defaults(error_handler=broken)
    only_default.add_node("g", fails)
    only_default.add_edge(START, "g")
    only_default = only_default.compile()

    # A prebuilt agent (made anew each time) with a Python tool on the scripted model, and
    # a ToolNode in a graph of our own.
    from superstep.chat_models import ChatScripted
    from superstep.prebuilt import (AgentMiddleware, ToolCallLimitMiddleware, ToolNode,
                                    create_react_agent, tools_condition)
    from superstep.tools import tool

    @tool
    def twice(x: int) -> int:
        """Double x."""
        return 2 * x

    script = tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False)
    call = {"id": "c", "type": "function", "function": {"name": "twice", "arguments": '{"x": 2}'}}
    for _ in range(1200):
        script.write(json.dumps({"content": "", "tool_calls": [call]}) + "\n")
        script.write(json.dumps({"content": "4"}) + "\n")
    script.close()
    model = ChatScripted(script.name)
    os.unlink(script.name)

    def ask_tool(s):
        if len(s["messages"]) > 2:
            return {"messages": [AIMessage("done")]}
        return {"messages": [AIMessage("", tool_calls=[
            {"name": "twice", "args": {"x": 3}, "id": "t", "type": "tool_call"}])]}

    tn = StateGraph(Msgs)
    tn.add_node("model", ask_tool)
    tn.add_node("tools", ToolNode([twice]))
    tn.add_edge(START, "model")
    tn.add_conditional_edges("model", tools_condition)
    tn.add_edge("tools", "model")
    tn = tn.compile()

    class Note(AgentMiddleware):
        def after_model(self, state):
            return {"messages": [AIMessage("noted")]} if state["messages"][-1].content else None

        def wrap_model_call(self, request, handler):
            return handler(request.override(system_prompt="q"))

        def wrap_tool_call(self, request, handler):
            return handler(request)

    def run(i):
        agent = create_react_agent(model, [twice], prompt="p",
                                   middleware=[Note(), ToolCallLimitMiddleware(run_limit=5)])
        assert [m.content for m in agent.invoke({"messages": [("user", "2?")]})["messages"][-2:]
                ] == ["4", "noted"]
        assert tn.invoke({"messages": [("user", "3?")]})["messages"][2].content == "6"
        assert handled.invoke({"n": i})["note"] == f"f: no {i}"
        try:
            only_default.invoke({"n": i})
        except KeyError:
            pass
        handled.get_input_jsonschema()
        msgs.invoke({"messages": [HumanMessage(str(i)), ("user", "y")]})
        cfg = {"configurable": {"thread_id": f"x{i % 3}"}}
        parent.invoke({"n": i}, cfg)
        saver.get_tuple(cfg)
        list(saver.list(cfg, limit=2))

    return [run]


def _cycle(saver_app, app, i, extra=()):
    for f in extra:
        f(i)
    cfg = {"configurable": {"thread_id": "leak"}}
    try:
        saver_app.invoke({"n": i}, cfg)
    except RuntimeError:
        pass
    list(app.stream({"n": i}, stream_mode=["values", "updates"]))
