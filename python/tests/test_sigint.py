"""Ctrl-C during invoke and stream (python/src/runner.c, run_cancelled; docs/python.md).

A SIGINT is raised from inside a node, deterministically: `signal.raise_signal` on the
main thread (the node runs there: a superstep of one task runs on the invoking thread),
from a worker once the main thread waits in the engine, or sent to the main thread
(`pthread_kill`) from the engine's thread of a `stream()` run while it waits for chunks.
"""

import operator
import signal
import sys
import threading
from typing import Annotated, TypedDict

import pytest

from superstep.checkpoint import InMemorySaver
from superstep.graph import START, StateGraph


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _chain(b_action):
    """a -> b -> c, b calling b_action() the first time it runs."""
    runs = {"b": 0}

    def a(state):
        return {"log": ["a"]}

    def b(state):
        runs["b"] += 1
        if runs["b"] == 1:
            b_action()
        return {"log": ["b"]}

    def c(state):
        return {"log": ["c"]}

    g = StateGraph(Log)
    g.add_sequence([a, b, c])
    g.add_edge(START, "a")
    return g.compile(checkpointer=InMemorySaver()), runs


@pytest.fixture
def default_sigint():
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def test_sigint_in_a_node_stops_invoke(default_sigint):
    app, runs = _chain(lambda: signal.raise_signal(signal.SIGINT))
    cfg = {"configurable": {"thread_id": "1"}}
    with pytest.raises(KeyboardInterrupt):
        app.invoke({"log": []}, cfg)
    # b was cancelled where it ran: the last completed superstep is a's.
    state = app.get_state(cfg)
    assert state.values == {"log": ["a"]}
    assert state.next == ("b",)
    assert app.invoke(None, cfg) == {"log": ["a", "b", "c"]}
    assert runs["b"] == 2


def test_sigint_while_the_engine_runs_stops_at_the_next_superstep(default_sigint):
    """The signal comes while the main thread waits in the engine (running no Python): the
    running superstep finishes and commits, and the run stops before the next one."""
    both = threading.Barrier(2)
    main_id = threading.main_thread().ident

    def node(name):
        def run(state):
            both.wait()  # x and y run at once: one on the main thread, one on a worker
            if threading.current_thread() is not threading.main_thread():
                # wait until the main thread is back in the engine (its Python frame is
                # invoke's, inside _cg.run), then Ctrl-C
                while sys._current_frames()[main_id].f_code.co_name != "invoke":
                    threading.Event().wait(0.001)
                signal.raise_signal(signal.SIGINT)
            return {"log": [name]}
        return run

    g = StateGraph(Log)
    g.add_node("a", lambda s: {"log": ["a"]})
    g.add_node("x", node("x"))
    g.add_node("y", node("y"))
    g.add_node("c", lambda s: {"log": ["c"]})
    g.add_edge(START, "a")
    g.add_edge("a", "x")
    g.add_edge("a", "y")
    g.add_edge(["x", "y"], "c")
    app = g.compile(checkpointer=InMemorySaver(), workers=2)
    cfg = {"configurable": {"thread_id": "2"}}
    with pytest.raises(KeyboardInterrupt):
        app.invoke({"log": []}, cfg)
    state = app.get_state(cfg)
    assert state.values == {"log": ["a", "x", "y"]}
    assert state.next == ("c",)
    assert app.invoke(None, cfg) == {"log": ["a", "x", "y", "c"]}


def test_sigint_during_stream_stops_at_a_superstep_boundary(default_sigint):
    """stream() runs the engine on a helper thread; the main thread waits for chunks, gets
    the KeyboardInterrupt, and the run stops before its next superstep (b, on the helper
    thread, finishes: its superstep is kept) even with no event to stop it at."""
    main_id = threading.main_thread().ident

    def ctrl_c():
        # once the main thread waits for a chunk (in stream(), not starting its thread),
        # to the main thread, as a terminal's Ctrl-C mostly lands: that wait is interrupted
        # (raised on this thread, the signal would not wake it)
        while sys._current_frames()[main_id].f_code.co_name != "stream":
            threading.Event().wait(0.001)
        signal.pthread_kill(main_id, signal.SIGINT)
        # b ends once the consumer has let go of the stream (it waits in stream()'s
        # t.join(), after it set the run's stop event)
        while sys._current_frames()[main_id].f_code.co_name not in ("join",
                                                                    "_wait_for_tstate_lock"):
            threading.Event().wait(0.001)

    app, runs = _chain(ctrl_c)
    cfg = {"configurable": {"thread_id": "3"}}
    chunks = []
    with pytest.raises(KeyboardInterrupt):
        for chunk in app.stream({"log": []}, cfg, stream_mode="custom"):  # no events
            chunks.append(chunk)
    state = app.get_state(cfg)
    assert state.values == {"log": ["a", "b"]}
    assert state.next == ("c",)
    assert app.invoke(None, cfg) == {"log": ["a", "b", "c"]}
    assert runs["b"] == 1
