"""Coroutine nodes, routers, tasks and entrypoints (`async def`) on an asyncio loop.

The engine calls a node on one of its threads (its *home* thread). When the
node's function gives a coroutine, the coroutine runs as a task of the run's
loop: the caller's loop under `ainvoke`/`astream` (as LangGraph runs async
nodes), else a loop of the module's own, on a thread of its own, for a
synchronous `invoke`. The home thread waits for the coroutine (without the
GIL) and meanwhile runs what must run on it: the engine's calls that belong
to the node (`interrupt()`, the stream writer, a task's submit and join), which
the coroutine hands it through `_Home.call` / `_Home.acall`. Coroutines of the
nodes of one superstep run concurrently, as many at once as the graph has
workers (compile(workers=), default 4): each waits on its own home thread.

A node with a timeout (TimeoutPolicy), or in a superstep with a deadline
(step_timeout), or of a run that can be stopped (ainvoke, stream: a
threading.Event set when the caller was cancelled or the consumer went away):
its home thread wakes every 10 ms to ask the engine whether the node ran out
of time (`_core.node_cancelled`, sst_node_cancelled) and whether the run's
stop is set; then it cancels the coroutine's task and waits for it to end (a
coroutine blocking its loop is cancelled only when it next awaits). The
engine fails a timed-out attempt with its timeout error whatever the
coroutine did after that; a stopped run's node fails with RunCancelled, which
python/src/graph.c treats as a Ctrl-C: never retried, the run stops there.
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
from typing import Any, Callable, Optional

from . import _core

# The caller's loop, set by ainvoke/astream for the invoke they run on a thread.
_LOOP: contextvars.ContextVar = contextvars.ContextVar("superstep_loop", default=None)
# The home of the node whose coroutine is running (set in the coroutine's task).
_HOME: contextvars.ContextVar = contextvars.ContextVar("superstep_home", default=None)

_own_loop: Optional[asyncio.AbstractEventLoop] = None
_own_lock = threading.Lock()


def caller_loop() -> Optional[asyncio.AbstractEventLoop]:
    """The loop an invoke's coroutines run on: the ainvoke caller's, unless the invoke
    runs on that loop's own thread (a blocking invoke inside a coroutine), else None."""
    loop = _LOOP.get()
    if loop is None or loop.is_closed():
        return None
    try:
        running = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    return None if running is loop else loop


def own_loop() -> asyncio.AbstractEventLoop:
    """The module's loop for synchronous invokes (started on first use, a daemon thread)."""
    global _own_loop
    with _own_lock:
        if _own_loop is None:
            loop = asyncio.new_event_loop()
            ready = threading.Event()

            def main() -> None:
                asyncio.set_event_loop(loop)
                loop.call_soon(ready.set)
                loop.run_forever()

            threading.Thread(target=main, name="superstep-asyncio", daemon=True).start()
            ready.wait()
            _own_loop = loop
        return _own_loop


class _Home:
    """A node's home thread while its coroutine runs elsewhere (see the module's doc)."""

    __slots__ = ("q", "ident", "config", "store", "context", "loop", "task")

    def __init__(self, config: Any, store: Any, context: Any, loop: Any) -> None:
        self.q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        self.ident = threading.get_ident()
        self.config = config
        self.store = store
        self.context = context
        self.loop = loop
        self.task: Optional["asyncio.Task[Any]"] = None  # the coroutine's, once it started

    def call(self, fn: Callable, *args: Any) -> Any:
        """fn(*args) on the home thread; the calling thread waits (a short engine call)."""
        if threading.get_ident() == self.ident:
            return fn(*args)
        done = threading.Event()
        box: list = []
        self.q.put((fn, args, box, done))
        done.wait()
        if box[0]:
            raise box[1]
        return box[1]

    async def acall(self, fn: Callable, *args: Any) -> Any:
        """fn(*args) on the home thread; the coroutine awaits it, the loop runs on."""
        loop = asyncio.get_running_loop()
        fut = loop.create_future()
        self.q.put((fn, args, fut, loop))
        return await fut

    def serve(self, cf: Any, limited: bool = False, stop: Any = None) -> Any:
        """Runs the calls handed over until the coroutine's future @p cf is done; its result.
        @p limited: the node has a time limit; @p stop: the run's stop event (or None);
        both asked every _POLL seconds."""
        cf.add_done_callback(lambda _f: self.q.put(None))
        cancelled = stopped = False
        try:
            while True:
                if (limited or stop is not None) and not cancelled:
                    try:
                        item = self.q.get(timeout=_POLL)
                    except queue.Empty:
                        stopped = stop is not None and stop.is_set()
                        if stopped or (limited and _core.node_cancelled()):
                            cancelled = True
                            self.loop.call_soon_threadsafe(self._cancel)
                        continue
                else:
                    item = self.q.get()
                if item is None:
                    break
                fn, args, box, done = item
                try:
                    out, failed = fn(*args), False
                except BaseException as e:  # handed to the coroutine, raised there
                    out, failed = e, True
                if isinstance(done, threading.Event):
                    box.extend((failed, out))
                    done.set()
                else:
                    done.call_soon_threadsafe(_settle, box, failed, out)
        except BaseException:
            # KeyboardInterrupt while the home thread (the main thread) waits: the
            # coroutine is cancelled, the node fails with it.
            cf.cancel()
            raise
        if stopped:  # the run was stopped: the node fails as under Ctrl-C (graph.c)
            raise RunCancelled("the run was stopped while the node ran")
        if cancelled:  # out of time: what the coroutine gave is dropped (by the engine too)
            raise asyncio.CancelledError("the node ran out of time")
        return cf.result()

    def _cancel(self) -> None:
        """On the loop: cancels the coroutine's task (it has not started: at its start)."""
        if self.task is not None:
            self.task.cancel()
        else:
            self.task = _CANCEL_AT_START


def _settle(fut: "asyncio.Future[Any]", failed: bool, out: Any) -> None:
    if fut.cancelled():
        return
    if failed:
        fut.set_exception(out)
    else:
        fut.set_result(out)


def home() -> Optional[_Home]:
    """The home of the coroutine running on this thread, unless this is its home thread."""
    h = _HOME.get()
    if h is None or h.ident == threading.get_ident():
        return None
    return h


# How often a home thread of a node with a time limit asks whether its time ran out.
_POLL = 0.01


class RunCancelled(asyncio.CancelledError):
    """A coroutine node's failure when its run was stopped (its ainvoke caller cancelled,
    its stream's consumer gone): python/src/graph.c fails the node with SST_ECANCELLED (no
    retry) and stops the run, as for a Ctrl-C."""

    _superstep_run_cancelled = True
_CANCEL_AT_START: Any = object()


async def _bound(coro: Any, h: _Home) -> Any:
    _HOME.set(h)
    if h.task is _CANCEL_AT_START:
        coro.close()
        raise asyncio.CancelledError("the node ran out of time")
    h.task = asyncio.current_task()
    return await coro


def run(coro: Any, loop: Optional[asyncio.AbstractEventLoop], config: Any, store: Any,
        context: Any, stop: Any = None) -> Any:
    """Runs @p coro (from a node, router, task or entrypoint called on this engine
    thread) on @p loop (None: the module's own) to its end; its result, or its exception."""
    if loop is None or loop.is_closed():
        loop = own_loop()
    h = _Home(config, store, context, loop)
    return h.serve(asyncio.run_coroutine_threadsafe(_bound(coro, h), loop), _core.node_limited(),
                   stop)


def heartbeat() -> None:
    """runtime.heartbeat(): progress for the running node's idle timeout (from a coroutine,
    on its home thread)."""
    h = home()
    if h is not None:
        h.call(_core.heartbeat)
    else:
        _core.heartbeat()


def emit(chunk: Any) -> Any:
    """The stream writer of a coroutine node: the chunk goes out from its home thread."""
    h = home()
    return h.call(_core.emit, chunk) if h is not None else _core.emit(chunk)


class TaskFuture:
    """A task's future inside a coroutine: awaitable (the join runs on the home thread,
    the loop runs on), or `result()` (the loop waits)."""

    __slots__ = ("_fut", "_home")

    def __init__(self, fut: Any, h: _Home) -> None:
        self._fut = fut
        self._home = h

    def __await__(self) -> Any:
        return self._home.acall(self._fut.result).__await__()

    def result(self, timeout: Any = None) -> Any:
        return self._home.call(self._fut.result)

    def done(self) -> bool:
        return bool(self._fut.done())

    def __getattr__(self, name: str) -> Any:
        return getattr(self._fut, name)
