"""superstep.func's own tests (docs/python.md): tasks in parallel on the engine's
workers, exceptions, retries, replay after an interrupt, the store and the
runtime in entrypoints, tasks and nodes, and no reference leaks."""

import gc
import sys
import threading
import time
from typing import TypedDict

import pytest

from superstep.cache import InMemoryCache
from superstep.checkpoint import InMemorySaver, SqliteSaver
from superstep.config import get_config, get_store, get_stream_writer
from superstep.func import entrypoint, task
from superstep.graph import START, StateGraph
from superstep.runtime import Runtime, get_runtime
from superstep.store import InMemoryStore
from superstep.types import CachePolicy, Command, RetryPolicy, interrupt


def test_tasks_run_in_parallel_on_workers():
    """Tasks started before one is waited for overlap (sleep releases the GIL).
    Run under ThreadSanitizer in the tsan build."""
    active, peak = [], []
    lock = threading.Lock()

    @task
    def work(i: int) -> int:
        with lock:
            active.append(i)
            peak.append(len(active))
        time.sleep(0.1)
        with lock:
            active.remove(i)
        return i * i

    @entrypoint(workers=4)
    def wf(n: int) -> list:
        futures = [work(i) for i in range(n)]
        return [f.result() for f in futures]

    for _ in range(3):
        assert wf.invoke(4) == [0, 1, 4, 9]
    assert max(peak) >= 2


def test_future_ids_read_while_tasks_run():
    """The entrypoint reads its futures' ids while their tasks run on the workers
    (each waits until all ids are read). The id is made before the task is queued:
    made lazily, the caller and the worker both wrote it (test_python_threads, TSan)."""
    ready = threading.Event()

    @task
    def hold(i: int) -> int:
        ready.wait()
        return i

    @entrypoint(workers=4)
    def wf(n: int) -> list:
        futures = [hold(i) for i in range(n)]
        ids = [f.id for f in futures]
        ready.set()
        assert [f.result() for f in futures] == list(range(n))
        assert [f.id for f in futures] == ids
        return ids

    for _ in range(3):
        ready.clear()
        ids = wf.invoke(8)
        assert len(set(ids)) == 8
        assert all(len(i) == 32 and int(i, 16) >= 0 for i in ids)


def test_task_exception_is_the_same_object_and_retry():
    boom = ValueError("boom")
    attempts = []

    @task
    def fails() -> None:
        raise boom

    @task(retry_policy=RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False))
    def flaky(x: int) -> int:
        attempts.append(x)
        if len(attempts) < 3:
            raise ConnectionError("try again")
        return x + 1

    @entrypoint()
    def wf(x: int) -> int:
        try:
            fails().result()
        except ValueError as e:
            assert e is boom
        return flaky(x).result()

    assert wf.invoke(1) == 2
    assert attempts == [1, 1, 1]

    @entrypoint()
    def wf2(x: int) -> int:
        return fails().result()

    with pytest.raises(ValueError) as info:
        wf2.invoke(1)
    assert info.value is boom


def test_tasks_are_replayed_after_interrupt_in_a_new_process_s_saver(tmp_path):
    """A resume on a fresh SqliteSaver (as another process would) replays the tasks."""
    runs = []

    @task
    def slow(x: int) -> int:
        runs.append(x)
        return x * 10

    def make(saver):
        @entrypoint(checkpointer=saver)
        def wf(x: int, *, previous=None) -> dict:
            a = slow(x).result()
            answer = interrupt({"a": a})
            return {"a": a, "answer": answer, "previous": previous}

        return wf

    path = str(tmp_path / "t.db")
    cfg = {"configurable": {"thread_id": "1"}}
    out = make(SqliteSaver(path)).invoke(4, cfg)
    assert out["__interrupt__"][0].value == {"a": 40}
    assert make(SqliteSaver(path)).invoke(Command(resume="yes"), cfg) == {
        "a": 40, "answer": "yes", "previous": None}
    assert runs == [4]


def test_store_config_writer_and_runtime_reach_entrypoints_tasks_and_nodes():
    store = InMemoryStore()

    @task
    def remember(key: str) -> str:
        get_store().put(("mem",), key, {"v": key})
        get_stream_writer()({"wrote": key})
        assert get_config()["configurable"]["thread_id"] == "t"
        assert get_runtime().store is store
        return key

    @entrypoint(checkpointer=InMemorySaver(), store=store)
    def wf(key: str, *, store, runtime: Runtime, config) -> list:
        assert runtime.store is store
        assert config["configurable"]["thread_id"] == "t"
        remember(key).result()
        return [i.key for i in store.search(("mem",))]

    chunks = list(wf.stream("a", {"configurable": {"thread_id": "t"}},
                            stream_mode=["custom", "updates"]))
    assert ("custom", {"wrote": "a"}) in chunks
    assert ("updates", {"wf": ["a"]}) in chunks

    class State(TypedDict):
        n: int

    def node(state: State, store) -> dict:
        assert get_store() is store
        # a task called from a StateGraph node
        store.put(("mem",), "node", {"v": remember("b").result()})
        return {"n": state["n"] + 1}

    g = StateGraph(State)
    g.add_node("node", node)
    g.add_edge(START, "node")
    app = g.compile(store=store)
    assert app.invoke({"n": 1}, {"configurable": {"thread_id": "t"}}) == {"n": 2}
    assert store.get(("mem",), "node").value == {"v": "b"}
    assert store.get(("mem",), "b").value == {"v": "b"}


def test_task_cache_and_clear_cache():
    calls = []

    @task(cache_policy=CachePolicy(ttl=60))
    def square(x: int) -> int:
        calls.append(x)
        return x * x

    cache = InMemoryCache()

    @entrypoint(cache=cache)
    def wf(x: int) -> int:
        return square(x).result()

    assert [wf.invoke(3), wf.invoke(3), wf.invoke(4)] == [9, 9, 16]
    assert calls == [3, 4]
    square.clear_cache(cache)
    assert wf.invoke(3) == 9
    assert calls == [3, 4, 3]


def test_bad_input_is_named():
    @task
    def t(x):
        return x

    with pytest.raises(RuntimeError, match="outside"):
        t(1)

    @entrypoint()
    def wf(x):
        return t({1, 2}).result()

    with pytest.raises(TypeError, match="task input"):
        wf.invoke(1)

    @entrypoint()
    def wf2(x):
        return object()

    with pytest.raises(TypeError, match="entrypoint result"):
        wf2.invoke(1)

    with pytest.raises(TypeError, match="checkpointer"):
        entrypoint(checkpointer="nope")(lambda x: x)
    with pytest.raises(TypeError):
        entrypoint(store="nope")(lambda x: x)
    with pytest.raises(NotImplementedError):
        task(lambda: (yield 1))


def _counts():
    gc.collect()
    return len(gc.get_objects()), sys.getallocatedblocks()


def test_no_reference_leaks_over_2000_workflows():
    store = InMemoryStore()

    @task
    def double(x: int) -> int:
        return 2 * x

    @task
    def fails(x: int) -> int:
        raise KeyError(x)

    @entrypoint(checkpointer=InMemorySaver(), store=store)
    def wf(x: int, *, previous=None) -> int:
        a, b = double(x), double(x + 1)
        try:
            fails(x).result()
        except KeyError:
            pass
        if x % 3 == 0:
            interrupt("q")
        store.put(("n",), "k", {"x": x})
        return a.result() + b.result()

    def cycle(i):
        cfg = {"configurable": {"thread_id": str(i % 5)}}
        wf.invoke(i, cfg)
        list(wf.stream(i, cfg, stream_mode=["updates", "custom"]))
        store.search(("n",))

    for i in range(100):
        cycle(i)
    objects0, blocks0 = _counts()
    for i in range(100, 2100):
        cycle(i)
    objects1, blocks1 = _counts()
    assert objects1 - objects0 < 100, (objects0, objects1)
    assert blocks1 - blocks0 < 1000, (blocks0, blocks1)
