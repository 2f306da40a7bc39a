"""The GIL on the engine's worker threads (python/src/gil.c): a worker keeps its Python
thread state from one node call to the next instead of making one per call, and drops it
when its engine ends. Run under ThreadSanitizer in the tsan build (test_python_threads)."""

import gc
import operator
import threading
from typing import Annotated, TypedDict

from superstep.graph import END, START, StateGraph
from superstep.types import Send


class Pair(TypedDict):
    rounds: int
    seen: Annotated[list, operator.add]


def _pair_graph(local, barrier):
    """Each superstep sends two tasks that wait for each other (the wait releases the GIL),
    so that with two workers one of them runs on the pool's thread every time."""

    def work(arg):
        barrier.wait()
        local.calls = getattr(local, "calls", 0) + 1
        return {"seen": [(threading.get_ident(), local.calls)]}

    def fan(state):
        if len(state["seen"]) >= 2 * state["rounds"]:
            return END
        return [Send("work", {}), Send("work", {})]

    g = StateGraph(Pair)
    g.add_node("join", lambda s: {})
    g.add_node("work", work)
    g.add_edge(START, "join")
    g.add_conditional_edges("join", fan, ["work", END])
    g.add_edge("work", "join")
    return g.compile(workers=2)


def test_worker_keeps_its_thread_state_between_node_calls():
    local = threading.local()
    barrier = threading.Barrier(2, timeout=300)
    app = _pair_graph(local, barrier)
    rounds = 5
    seen = app.invoke({"rounds": rounds, "seen": []})["seen"]
    main = threading.get_ident()
    on_worker = [calls for ident, calls in seen if ident != main]
    assert len(on_worker) == rounds
    # the worker's threading.local lived through all its calls (a fresh thread state
    # per call would start it over at 1 each time)
    assert sorted(on_worker) == list(range(1, rounds + 1))


def test_engines_freed_with_their_workers_thread_states():
    """Graphs with workers made and dropped: each engine's threads end and delete their
    thread states (taking the GIL as they end), without a deadlock or a crash."""
    for _ in range(20):
        local = threading.local()
        app = _pair_graph(local, threading.Barrier(2, timeout=300))
        assert len(app.invoke({"rounds": 2, "seen": []})["seen"]) == 4
        del app
        gc.collect()
