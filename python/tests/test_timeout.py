"""Node timeouts (TimeoutPolicy): LangGraph's tests of libs/langgraph/tests/test_retry.py
that drive them through StateGraph, ported whole, and the binding's own (with step_timeout
and the cancellation of a run's coroutine nodes by its ainvoke caller or astream consumer).

Debian 12 has no pytest async plugin: as in test_pregel_async.py, each async test's body is
LangGraph's, whole, inside `async def main()` run by `asyncio.run`. Only the imports changed
(`langgraph` -> `superstep`). The tests of test_retry.py not ported, and why, are listed in
docs/python.md.

None asserts on wall time. A test whose node must run out of time sleeps (or waits) ten
times its limit or more; one whose node must not gives it ten times what it needs or more,
scaled by SST_TEST_TIME_SCALE (tu_time_scale's factor) in the binding's own tests.
"""

import asyncio
import contextlib
import os
import time
from datetime import timedelta
from typing import Annotated, TypedDict
import operator

import pytest

from superstep.errors import NodeTimeoutError
from superstep.graph import END, START, StateGraph
from superstep.types import RetryPolicy, Send, TimeoutPolicy

SCALE = float(os.environ.get("SST_TEST_TIME_SCALE") or 1)


class _TimeoutState(TypedDict):
    x: int


# ---- LangGraph's, ported whole ----------------------------------------------


def test_state_graph_add_node_timeout_e2e():
    async def main():
        async def slow(state: _TimeoutState) -> _TimeoutState:
            await asyncio.sleep(1.0)
            return {"x": state["x"] + 1}

        builder = StateGraph(_TimeoutState)
        builder.add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=0.05))
        builder.add_edge(START, "slow")
        builder.add_edge("slow", END)
        graph = builder.compile()
        with pytest.raises(NodeTimeoutError):
            await graph.ainvoke({"x": 1})

    asyncio.run(main())


def test_send_timeout_overrides_target_node_timeout():
    async def main():
        async def slow(state: _TimeoutState) -> _TimeoutState:
            await asyncio.sleep(0.2)
            return {"x": state["x"] + 1}

        def route(state: _TimeoutState) -> list[Send]:
            return [Send("slow", state, timeout=TimeoutPolicy(idle_timeout=0.05))]

        builder = StateGraph(_TimeoutState)
        builder.add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=1.0))
        builder.add_conditional_edges(START, route)
        builder.add_edge("slow", END)
        graph = builder.compile()

        with pytest.raises(NodeTimeoutError) as excinfo:
            await graph.ainvoke({"x": 1})
        assert excinfo.value.node == "slow"
        assert excinfo.value.kind == "idle"
        assert excinfo.value.idle_timeout == 0.05

    asyncio.run(main())


def test_state_graph_add_node_timeout_composes_with_retry():
    """add_node(..., timeout=TimeoutPolicy(...)) retries then succeeds.

    LangGraph's idle timeout here is 0.3 s and its first attempt sleeps 1 s: on a busy
    machine the second attempt, which returns at once, could still be idle for 0.3 s
    before the loop runs it, and a third attempt would fail `len(attempts) == 2`. The
    only change: the idle timeout is 2 s (times SST_TEST_TIME_SCALE) and the first
    attempt sleeps far past it (it is cancelled when the timeout fires)."""

    async def main():
        attempts: list[int] = []

        async def flaky(state: _TimeoutState) -> _TimeoutState:
            attempts.append(len(attempts))
            if len(attempts) < 2:
                await asyncio.sleep(100.0 * SCALE)
            return {"x": state["x"] + 1}

        builder = StateGraph(_TimeoutState)
        builder.add_node(
            "flaky",
            flaky,
            timeout=TimeoutPolicy(idle_timeout=2.0 * SCALE),
            retry_policy=RetryPolicy(
                max_attempts=3,
                initial_interval=0.0,
                jitter=False,
                retry_on=NodeTimeoutError,
            ),
        )
        builder.add_edge(START, "flaky")
        builder.add_edge("flaky", END)
        graph = builder.compile()
        result = await graph.ainvoke({"x": 0})
        assert result == {"x": 1}
        assert len(attempts) == 2

    asyncio.run(main())


def test_state_graph_compile_rejects_sync_node_timeout():
    def slow(state: _TimeoutState) -> _TimeoutState:
        return {"x": state["x"] + 1}

    builder = StateGraph(_TimeoutState)
    builder.add_node("slow", slow, timeout=TimeoutPolicy(idle_timeout=0.05))
    builder.add_edge(START, "slow")
    builder.add_edge("slow", END)

    with pytest.raises(ValueError, match="only supported for async nodes"):
        builder.compile()


def test_set_node_defaults_timeout():
    async def main():
        class State(TypedDict):
            foo: str

        async def slow_node(state: State) -> State:
            await asyncio.sleep(10)
            return {"foo": "should-not-happen"}

        graph = (
            StateGraph(State)
            .set_node_defaults(timeout=TimeoutPolicy(run_timeout=0.05))
            .add_node("slow", slow_node)
            .add_edge(START, "slow")
            .compile()
        )

        with pytest.raises(NodeTimeoutError):
            await graph.ainvoke({"foo": ""})

    asyncio.run(main())


def test_set_node_defaults_timeout_per_node_wins():
    """Per-node timeout overrides the default; a generous per-node timeout
    allows a node to complete even when the builder default is very short."""

    async def main():
        class State(TypedDict):
            foo: str

        async def quick_node(state: State) -> State:
            await asyncio.sleep(0.05)
            return {"foo": "done"}

        graph = (
            StateGraph(State)
            .set_node_defaults(timeout=TimeoutPolicy(run_timeout=0.01))
            .add_node("quick", quick_node, timeout=TimeoutPolicy(run_timeout=5.0))
            .add_edge(START, "quick")
            .compile()
        )

        result = await graph.ainvoke({"foo": ""})
        assert result["foo"] == "done"

    asyncio.run(main())


# ---- the binding's own --------------------------------------------------------


def _graph(node, **kw):
    return (
        StateGraph(_TimeoutState)
        .add_node("n", node, **kw)
        .add_edge(START, "n")
        .add_edge("n", END)
        .compile()
    )


def test_timeout_policy_coerces_as_langgraphs():
    assert TimeoutPolicy.coerce(None) is None
    assert TimeoutPolicy.coerce(timedelta(milliseconds=250)) == TimeoutPolicy(run_timeout=0.25)
    assert TimeoutPolicy.coerce(2) == TimeoutPolicy(run_timeout=2.0)
    p = TimeoutPolicy.coerce(TimeoutPolicy(run_timeout=1.0, idle_timeout=2.0))
    assert TimeoutPolicy.coerce(p) is p
    assert Send("n", {}, timeout=1).timeout == TimeoutPolicy(run_timeout=1.0)
    assert Send("n", {}).timeout is None
    for bad in (0, -1, timedelta(0), TimeoutPolicy(idle_timeout=0)):
        with pytest.raises(ValueError, match="greater than 0"):
            TimeoutPolicy.coerce(bad)
    with pytest.raises(ValueError, match="greater than 0"):
        Send("slow", {}, timeout=0)
    with pytest.raises(ValueError, match="greater than 0"):
        StateGraph(_TimeoutState).add_node("slow", lambda state: state, timeout=0)
    with pytest.raises(ValueError, match="refresh_on"):
        TimeoutPolicy.coerce(TimeoutPolicy(run_timeout=1, refresh_on="never"))
    with pytest.raises(TypeError, match="timeout must be"):
        TimeoutPolicy.coerce("1s")


def test_sync_nodes_refuse_a_default_timeout_too():
    def sync(state):
        return {"x": 1}

    builder = (
        StateGraph(_TimeoutState)
        .set_node_defaults(timeout=1.0)
        .add_node("sync", sync)
        .add_edge(START, "sync")
    )
    with pytest.raises(ValueError, match="Node 'sync' is sync"):
        builder.compile()


def test_a_timed_out_coroutine_is_cancelled_and_its_run_fails():
    """The node's coroutine sees CancelledError when its time runs out (as LangGraph's
    asyncio.timeout cancels it); the error names the node and the limit; invoke (the
    module's own loop) and ainvoke (the caller's) alike."""
    seen = []

    async def slow(state):
        try:
            await asyncio.Event().wait()  # never set: only the timeout ends it
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise
        return {"x": 2}

    graph = _graph(slow, timeout=TimeoutPolicy(run_timeout=0.05))
    with pytest.raises(NodeTimeoutError) as excinfo:
        graph.invoke({"x": 1})
    e = excinfo.value
    assert (e.node, e.kind, e.run_timeout, e.timeout) == ("n", "run", 0.05, 0.05)
    assert e.elapsed >= 0.05
    assert seen == ["cancelled"]

    async def main():
        with pytest.raises(NodeTimeoutError):
            await graph.ainvoke({"x": 1})

    asyncio.run(main())
    assert seen == ["cancelled", "cancelled"]


def test_a_coroutine_that_swallows_its_cancellation_still_times_out():
    async def stubborn(state):
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            pass
        return {"x": 99}

    graph = _graph(stubborn, timeout=TimeoutPolicy(idle_timeout=0.05))
    with pytest.raises(NodeTimeoutError) as excinfo:
        graph.invoke({"x": 1})
    assert excinfo.value.kind == "idle"


def test_a_coroutine_blocking_its_loop_is_not_stopped_but_its_result_is_dropped():
    """A coroutine that never awaits (time.sleep, a long computation holding the GIL)
    cannot be cancelled: it runs to its end. Its result comes after its time ran out, so
    the engine drops it for NodeTimeoutError (LangGraph lets such a result through)."""
    finished = []

    async def blocking(state):
        time.sleep(0.5)  # the node's work: ten times its limit, the loop blocked
        finished.append(True)
        return {"x": 99}

    graph = _graph(blocking, timeout=TimeoutPolicy(run_timeout=0.05))
    with pytest.raises(NodeTimeoutError):
        graph.invoke({"x": 1})
    assert finished == [True]


def test_retry_on_that_does_not_take_timeouts_does_not_retry_them():
    attempts = []

    async def slow(state):
        attempts.append(1)
        await asyncio.Event().wait()

    policy = RetryPolicy(max_attempts=3, initial_interval=0.0, jitter=False, retry_on=KeyError)
    graph = _graph(slow, timeout=0.05, retry_policy=policy)
    with pytest.raises(NodeTimeoutError):
        graph.invoke({"x": 1})
    assert len(attempts) == 1

    # the default retry_on retries them (NodeTimeoutError is no OSError)
    attempts.clear()
    graph = _graph(slow, timeout=0.05, retry_policy=RetryPolicy(max_attempts=2,
                                                                initial_interval=0.0))
    with pytest.raises(NodeTimeoutError):
        graph.invoke({"x": 1})
    assert len(attempts) == 2


def _beating(n, gap, *, beat=None, write=None):
    async def node(state, runtime):
        for i in range(n):
            await asyncio.sleep(gap)
            if beat:
                runtime.heartbeat()
            if write:
                runtime.stream_writer({"i": i})
        return {"x": state["x"] + 1}

    return node


def test_heartbeats_and_stream_chunks_reset_the_idle_timeout():
    """An idle timeout of 1 s (x scale) over a node that works 1.5 s (x scale) in steps of
    0.05 s: it finishes when each step beats or writes a chunk, and runs out of time when
    none does, or when refresh_on="heartbeat" and the steps only write chunks."""
    idle = 1.0 * SCALE
    n, gap = 30, 0.05 * SCALE

    ok = _graph(_beating(n, gap, beat=True), timeout=TimeoutPolicy(idle_timeout=idle))
    assert ok.invoke({"x": 1}) == {"x": 2}
    ok = _graph(_beating(n, gap, write=True), timeout=TimeoutPolicy(idle_timeout=idle))
    assert ok.invoke({"x": 1}) == {"x": 2}
    ok = _graph(_beating(n, gap, beat=True),
                timeout=TimeoutPolicy(idle_timeout=idle, refresh_on="heartbeat"))
    assert ok.invoke({"x": 1}) == {"x": 2}

    quiet = _graph(_beating(n, gap), timeout=TimeoutPolicy(idle_timeout=idle))
    with pytest.raises(NodeTimeoutError) as excinfo:
        quiet.invoke({"x": 1})
    assert excinfo.value.kind == "idle"
    chunks_only = _graph(_beating(n, gap, write=True),
                         timeout=TimeoutPolicy(idle_timeout=idle, refresh_on="heartbeat"))
    with pytest.raises(NodeTimeoutError) as excinfo:
        chunks_only.invoke({"x": 1})
    assert excinfo.value.kind == "idle"


def test_heartbeats_do_not_extend_the_run_timeout():
    run = 0.3
    graph = _graph(_beating(10**6, 0.01, beat=True),
                   timeout=TimeoutPolicy(run_timeout=run, idle_timeout=1000.0))
    with pytest.raises(NodeTimeoutError) as excinfo:
        graph.invoke({"x": 1})
    assert excinfo.value.kind == "run"
    assert excinfo.value.run_timeout == run


def test_a_timed_out_node_of_a_superstep_fails_the_run_others_finish():
    """Two async nodes of the first superstep, the second timed out: the run fails with its
    timeout (a task of a run's first superstep, made from its resume point, has its own
    node's timeout: src/pregel/resume.c)."""

    class S(TypedDict):
        vals: Annotated[list, operator.add]

    async def ok(state):
        return {"vals": ["ok"]}

    async def slow(state):
        await asyncio.sleep(5)  # a hundred times its limit

    graph = (
        StateGraph(S)
        .add_node("ok", ok)
        .add_node("slow", slow, timeout=0.05)
        .add_edge(START, "ok")
        .add_edge(START, "slow")
        .compile()
    )
    with pytest.raises(NodeTimeoutError) as excinfo:
        graph.invoke({"vals": []})
    assert excinfo.value.node == "slow"


def test_step_timeout_fails_the_run_with_a_timeout_error():
    """graph.step_timeout (LangGraph's attribute): a superstep past it fails the run with
    StepTimeoutError, a TimeoutError (asyncio.TimeoutError); its coroutines are cancelled."""
    from superstep.errors import StepTimeoutError

    seen = []

    async def stuck(state):
        try:
            await asyncio.sleep(5)  # a hundred times the limit
        except asyncio.CancelledError:
            seen.append("cancelled")
            raise

    graph = _graph(stuck)
    assert graph.step_timeout is None
    graph.step_timeout = 0.05
    assert graph.step_timeout == 0.05
    with pytest.raises(StepTimeoutError) as excinfo:
        graph.invoke({"x": 1})
    assert isinstance(excinfo.value, TimeoutError)
    assert "timed out" in str(excinfo.value)
    assert seen == ["cancelled"]
    graph.step_timeout = None  # no limit again

    async def quick(state):
        return {"x": state["x"] + 1}

    assert graph.step_timeout is None
    for bad in (0, -1, "1", True):
        with pytest.raises(ValueError, match="step_timeout"):
            graph.step_timeout = bad
    ok = _graph(quick)
    ok.step_timeout = 10 * SCALE
    assert ok.invoke({"x": 1}) == {"x": 2}


# ---- cancellation: the caller of ainvoke cancelled, astream closed ----------------


def _waiting_graph(started, cancelled, after, checkpointer=None):
    """START -> wait -> after: `wait` waits (for nothing) until cancelled."""

    class S(TypedDict):
        log: Annotated[list, operator.add]

    async def wait(state):
        started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            cancelled.append(True)
            raise

    def later(state):
        after.append(True)
        return {"log": ["after"]}

    return (
        StateGraph(S)
        .add_node("first", lambda s: {"log": ["first"]})
        .add_node("wait", wait, retry_policy=RetryPolicy(max_attempts=3, initial_interval=0))
        .add_node("after", later)
        .add_edge(START, "first")
        .add_edge("first", "wait")
        .add_edge("wait", "after")
        .compile(checkpointer=checkpointer)
    )


def test_cancelling_the_ainvoke_caller_cancels_the_node_and_stops_the_run():
    """The node's coroutine is cancelled (not retried), no later superstep runs, what
    committed stays: the thread resumes at the cancelled node."""
    from superstep.checkpoint import InMemorySaver

    cancelled, after = [], []

    async def main():
        started = asyncio.Event()
        graph = _waiting_graph(started, cancelled, after, InMemorySaver())
        cfg = {"configurable": {"thread_id": "t"}}
        task = asyncio.ensure_future(graph.ainvoke({"log": []}, cfg))
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        state = await graph.aget_state(cfg)
        assert state.values == {"log": ["first"]}
        assert state.next == ("wait",)

    asyncio.run(main())
    assert cancelled == [True]
    assert after == []


def test_closing_astream_cancels_the_running_node():
    cancelled, after = [], []

    async def main():
        started = asyncio.Event()
        graph = _waiting_graph(started, cancelled, after)
        chunks = []
        async with contextlib.aclosing(graph.astream({"log": []})) as stream:
            async for chunk in stream:
                chunks.append(chunk)
                await started.wait()
                break
        assert chunks == [{"first": {"log": ["first"]}}]

    asyncio.run(main())
    assert cancelled == [True]
    assert after == []
