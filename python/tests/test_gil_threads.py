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


# Streamed events from nodes on several workers: a node's writer() and push_message() send
# their event under the run's stream lock, whose holder may be in the stream callback waiting
# for the GIL. With the GIL held while they waited for that lock, two nodes deadlocked (the
# holder waited for the GIL, the writer held it and waited for the lock): one run in two hung
# within 20 invokes. Run in a child process, so that a deadlock fails this test, by its
# deadline, instead of hanging the suite.
_STREAMING_NODES = r'''
import operator
from typing import Annotated, TypedDict
from superstep.config import get_stream_writer
from superstep.graph import END, START, StateGraph, push_message

class S(TypedDict, total=False):
    n: Annotated[int, operator.add]
    messages: Annotated[list, operator.add]

def make(i):
    def node(state):
        w = get_stream_writer()
        for k in range(300):
            w({"node": i, "k": k})
            if k % 30 == 0:
                push_message({"role": "ai", "content": f"{i}/{k}", "id": f"m{i}-{k}"})
        return {"n": 1}
    return node

b = StateGraph(S)
for i in range(4):
    b.add_node(f"n{i}", make(i))
    b.add_edge(START, f"n{i}")
    b.add_edge(f"n{i}", END)
g = b.compile(workers=4)
for rep in range(30):
    custom = 0
    for mode, _ in g.stream({"n": 0}, stream_mode=["custom", "messages", "tasks", "debug"]):
        custom += mode == "custom"
    assert custom == 4 * 300, custom
print("ok")
'''


def test_nodes_on_several_workers_stream_events_without_deadlock():
    import os
    import subprocess
    import sys

    scale = float(os.environ.get("SST_TEST_TIME_SCALE") or 1)
    try:
        out = subprocess.run([sys.executable, "-c", _STREAMING_NODES], capture_output=True,
                             text=True, timeout=300 * scale)
    except subprocess.TimeoutExpired:
        raise AssertionError("30 streamed runs of 4 nodes did not end in 300 s: a deadlock")
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr[-2000:]
