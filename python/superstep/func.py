"""LangGraph's functional API (langgraph.func) on superstep's engine.

`@entrypoint` makes a workflow of one function an entrypoint graph of the C
engine (sst_graph_set_entrypoint): invoke, stream, get_state, history and
update_state are those of any compiled graph. `@task` makes a function a task:
calling it starts it on the engine's workers (sst_node_submit) and gives a
future; each finished task's result is checkpointed, so a resumed workflow
gets it back without running the task again (docs/functional.md).

A task's arguments are passed as `[args, kwargs]` and its result must be a
JSON-like value (dict, list, str, int, float, bool, None), as a node's state.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import types
import typing
import weakref
from typing import Any, Callable, Generic, Optional, Sequence, TypeVar

from . import _aio, _core
from .config import _local, get_stream_writer
from ._schema import schema_of as _schema_of, titled as _titled
from .graph import CompiledStateGraph, Runtime
from .types import CachePolicy, RetryPolicy, _should_retry

T = TypeVar("T")
R = TypeVar("R")
S = TypeVar("S")

_INJECTED = ("config", "writer", "store", "runtime", "previous")


class _FuncRun:
    """What an entrypoint's wrappers and its tasks receive about their invoke."""

    __slots__ = ("config", "context", "store", "loop")

    def __init__(self, config: dict, context: Any, store: Any, loop: Any = None) -> None:
        self.config = config
        self.context = context
        self.store = store
        self.loop = loop  # the loop of coroutines (superstep._aio), None: the module's


def _retry_tuple(policy: Any) -> Optional[tuple]:
    if policy is None:
        return None
    if not isinstance(policy, RetryPolicy) and isinstance(policy, (list, tuple)):
        if not policy:
            return None
        policy = policy[0]
    return (policy.max_attempts, policy.initial_interval, policy.backoff_factor,
            policy.max_interval, policy.jitter)


def _policies(policy: Any) -> tuple:
    if policy is None:
        return ()
    if isinstance(policy, RetryPolicy):
        return (policy,)
    return tuple(policy)


def _params(fn: Callable) -> dict:
    try:
        return dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return {}


def _fn_name(fn: Callable) -> str:
    while isinstance(fn, functools.partial):
        fn = fn.func
    name = getattr(fn, "__name__", None)
    return name if isinstance(name, str) else type(fn).__name__


class _Scope:
    """Sets the thread's config, store and context for a wrapped call."""

    __slots__ = ("run", "saved")
    # (Sets _local.loop too: the loop a task called from here runs its coroutine on.)

    def __init__(self, run: Any) -> None:
        self.run = run
        self.saved = None

    def __enter__(self) -> None:
        self.saved = (getattr(_local, "config", None), getattr(_local, "store", None),
                      getattr(_local, "context", None), getattr(_local, "loop", None))
        _local.config = self.run.config
        _local.store = self.run.store
        _local.context = self.run.context
        _local.loop = self.run.loop

    def __exit__(self, *exc: Any) -> None:
        _local.config, _local.store, _local.context, _local.loop = self.saved


def _run_of(run: Any, config: Any) -> Any:
    """The run info a task gets: its entrypoint's, or what its calling node set."""
    if isinstance(run, _FuncRun):
        return run
    cfg = getattr(_local, "config", None) or (config if isinstance(config, dict) else {})
    return _FuncRun(cfg, getattr(_local, "context", None), getattr(_local, "store", None),
                    getattr(_local, "loop", None))


def _inject(params: dict, run: Any, kwargs: dict) -> None:
    """Adds the injectable arguments the function declares and the caller did not give."""
    for name in ("config", "writer", "store", "runtime"):
        if name not in params or name in kwargs:
            continue
        if name == "config":
            kwargs[name] = run.config
        elif name == "writer":
            kwargs[name] = get_stream_writer()
        elif name == "store":
            kwargs[name] = run.store
        else:
            kwargs[name] = Runtime(run.context, run.store, get_stream_writer())


# ---- tasks -------------------------------------------------------------------


class _TaskFunction(Generic[T]):
    """A function made a task by @task: calling it starts it and gives a future."""

    def __init__(self, func: Callable, *, name: Optional[str] = None,
                 retry_policy: Any = None, cache_policy: Optional[CachePolicy] = None) -> None:
        if not callable(func):
            raise TypeError(f"task: expected a function, got {type(func).__name__}")
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("task: generators are not supported")
        self.func = func
        self.name = name if name is not None else _fn_name(func)
        self.retry_policy = _policies(retry_policy)
        self.cache_policy = cache_policy
        self._params = _params(func)
        functools.update_wrapper(self, func, updated=())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        ttl = None
        if self.cache_policy is not None:
            ttl = float(getattr(self.cache_policy, "ttl", None) or 0)
        home = _aio.home()
        if home is not None:
            # Called in a coroutine: submitted from its home thread (the engine's calls
            # belong to it); the future is awaitable.
            run = _FuncRun(home.config or {}, home.context, home.store, home.loop)
            fut = home.call(_core.submit, self, [list(args), kwargs], self.name,
                            _retry_tuple(self.retry_policy), ttl, run)
            return _aio.TaskFuture(fut, home)
        # The caller's config, store and context, for the task's thread.
        run = _FuncRun(getattr(_local, "config", None) or {}, getattr(_local, "context", None),
                       getattr(_local, "store", None), getattr(_local, "loop", None))
        return _core.submit(self, [list(args), kwargs], self.name,
                            retry=_retry_tuple(self.retry_policy), cache_ttl=ttl, run=run)

    def _call(self, input: Any, run: Any, config: Any) -> Any:
        args, kwargs = input if isinstance(input, list) and len(input) == 2 else ([input], {})
        run = _run_of(run, config)
        kwargs = dict(kwargs)
        _inject(self._params, run, kwargs)
        with _Scope(run):
            result = self.func(*args, **kwargs)
            if type(result) is types.CoroutineType:  # an async def task
                result = _aio.run(result, run.loop, run.config, run.store, run.context)
            return result

    def _retryable(self, exc: BaseException) -> bool:
        return any(_should_retry(p, exc) for p in self.retry_policy)

    def clear_cache(self, cache: Any) -> None:
        """Drops this task's cached results from @p cache (LangGraph's task.clear_cache)."""
        for graph in list(getattr(cache, "_graphs", ())):
            graph._cg.clear_task_cache(self.name)

    async def aclear_cache(self, cache: Any) -> None:
        """clear_cache() off the loop (LangGraph's task.aclear_cache)."""
        await asyncio.to_thread(self.clear_cache, cache)


def task(__func_or_none__: Optional[Callable] = None, *, name: Optional[str] = None,
         retry_policy: Any = None, cache_policy: Optional[CachePolicy] = None,
         **kwargs: Any) -> Any:
    """Makes a function a task (LangGraph's @task): `@task`, `@task()` or `task(fn, name=)`."""
    retry_policy = kwargs.pop("retry", retry_policy)
    if kwargs:
        raise TypeError(f"task: unexpected arguments {sorted(kwargs)}")

    def wrap(fn: Callable) -> _TaskFunction:
        return _TaskFunction(fn, name=name, retry_policy=retry_policy, cache_policy=cache_policy)

    return wrap(__func_or_none__) if __func_or_none__ is not None else wrap


# ---- entrypoints -------------------------------------------------------------


class _Builder:
    """What CompiledStateGraph asks of a builder: a root state."""

    root = ("replace", None, False)
    message_fields: tuple = ()  # an entrypoint's value holds no add_messages field


class _Entry:
    """The entrypoint's function as the C layer calls it."""

    def __init__(self, func: Callable, retry: tuple) -> None:
        self.func = func
        self.retry = retry
        self.params = _params(func)

    def _call(self, input: Any, previous: Any, run: Any) -> tuple:
        if not isinstance(run, _FuncRun):
            run = _FuncRun({}, None, None)
        kwargs: dict = {}
        if "previous" in self.params:
            kwargs["previous"] = previous
        _inject(self.params, run, kwargs)
        with _Scope(run):
            result = self.func(input, **kwargs)
            if type(result) is types.CoroutineType:  # an async def entrypoint
                result = _aio.run(result, run.loop, run.config, run.store, run.context)
        if isinstance(result, entrypoint.final):
            return (result.value, result.save, True)
        return (result, None, False)

    def _retryable(self, exc: BaseException) -> bool:
        return any(_should_retry(p, exc) for p in self.retry)


class EntrypointGraph(CompiledStateGraph):
    """An @entrypoint: a compiled graph whose state is the workflow's last result."""

    def __init__(self, func: Callable, *, checkpointer: Any, store: Any, cache: Any,
                 context_schema: Any, retry_policy: Any, workers: Optional[int],
                 name: Optional[str]) -> None:
        from .checkpoint import BaseCheckpointSaver

        if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
            raise TypeError(
                f"entrypoint: checkpointer must be a superstep checkpointer, got "
                f"{type(checkpointer).__name__}"
            )
        name = name or _fn_name(func)
        self._entry = _Entry(func, _policies(retry_policy))
        cg = _core.Entrypoint(
            name, self._entry, checkpointer=checkpointer, store=store,
            cache=getattr(cache, "_cache", cache), workers=workers if workers is not None else 4,
            retry=_retry_tuple(retry_policy),
        )
        super().__init__(_Builder(), cg, checkpointer, name)
        self.func = func
        self.store = store
        self.cache = cache
        self.context_schema = context_schema
        if cache is not None:
            cache._graphs.add(self)
        functools.update_wrapper(self, func, updated=())

    def _prepare(self, input: Any, config: Any, context: Any, *args: Any, **kwargs: Any) -> dict:
        kw = super()._prepare(input, config, context, *args, **kwargs)
        run = kw["pyconfig"]
        kw["pyconfig"] = _FuncRun(run.config, run.context, self.store, run.loop)
        return kw

    def stream(self, input: Any, config: Optional[dict] = None, **kwargs: Any) -> Any:
        return super().stream(input, config, **kwargs)

    # -- schemas --

    def _hints(self) -> dict:
        try:
            return typing.get_type_hints(self.func)
        except Exception:
            return {}

    def get_input_jsonschema(self, config: Any = None) -> dict:
        params = list(_params(self.func).values())
        hint = self._hints().get(params[0].name) if params else None
        return _titled(_schema_of(hint), "LangGraphInput")

    def get_output_jsonschema(self, config: Any = None) -> dict:
        hint = self._hints().get("return")
        if hint is entrypoint.final:
            hint = None
        elif typing.get_origin(hint) is entrypoint.final:
            hint = typing.get_args(hint)[0]
        return _titled(_schema_of(hint), "LangGraphOutput")

    def get_context_jsonschema(self, config: Any = None) -> Optional[dict]:
        if self.context_schema is None:
            return None
        return _schema_of(self.context_schema)


class entrypoint:
    """Makes a function a workflow (LangGraph's @entrypoint)."""

    @dataclasses.dataclass
    class final(Generic[R, S]):
        """Return `value` to the caller and keep `save` as the next run's `previous`."""

        value: Any
        save: Any

    def __init__(self, checkpointer: Any = None, store: Any = None, cache: Any = None,
                 context_schema: Any = None, cache_policy: Any = None,
                 retry_policy: Any = None, *, name: Optional[str] = None,
                 workers: Optional[int] = None, **kwargs: Any) -> None:
        retry_policy = kwargs.pop("retry", retry_policy)
        context_schema = kwargs.pop("config_schema", context_schema)
        if kwargs:
            raise TypeError(f"entrypoint: unexpected arguments {sorted(kwargs)}")
        if cache_policy is not None:
            raise NotImplementedError("entrypoint: cache_policy is not supported yet")
        self.checkpointer = checkpointer
        self.store = store
        self.cache = cache
        self.context_schema = context_schema
        self.retry_policy = retry_policy
        self.name = name
        self.workers = workers

    def __call__(self, func: Callable) -> EntrypointGraph:
        if inspect.isgeneratorfunction(func) or inspect.isasyncgenfunction(func):
            raise NotImplementedError("entrypoint: generators are not supported")
        hints = {}
        try:
            hints = typing.get_type_hints(func)
        except Exception:
            pass
        ret = hints.get("return")
        if typing.get_origin(ret) is entrypoint.final and len(typing.get_args(ret)) != 2:
            raise TypeError("entrypoint.final takes two type parameters: [value, save]")
        return EntrypointGraph(
            func, checkpointer=self.checkpointer, store=self.store, cache=self.cache,
            context_schema=self.context_schema, retry_policy=self.retry_policy,
            workers=self.workers, name=self.name,
        )


__all__ = ["entrypoint", "task", "EntrypointGraph"]
