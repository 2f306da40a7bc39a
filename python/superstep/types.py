"""LangGraph's langgraph.types on superstep: Send, Command, interrupt, Interrupt,
RetryPolicy, TimeoutPolicy, StateSnapshot, PregelTask, Overwrite, StreamWriter, Durability."""

from __future__ import annotations

import dataclasses
from datetime import timedelta
from typing import Any, Callable, Literal, NamedTuple, Optional, Sequence, Tuple, Type, Union

from . import _aio, _core

All = Literal["*"]
StreamMode = Literal["values", "updates", "checkpoints", "tasks", "debug", "messages", "custom"]
Durability = Literal["sync", "async", "exit"]
StreamWriter = Callable[[Any], None]


class Send:
    """Send(node, arg, timeout=None): run `node` once with `arg` as its input (map-reduce);
    `timeout` (seconds or a TimeoutPolicy) replaces the node's own for that task."""

    __slots__ = ("node", "arg", "timeout")

    def __init__(self, node: str, arg: Any, *, timeout: Any = None) -> None:
        self.node = node
        self.arg = arg
        self.timeout = TimeoutPolicy.coerce(timeout)

    def __hash__(self) -> int:
        return hash((self.node, repr(self.arg)))

    def __repr__(self) -> str:
        if self.timeout is not None:
            return f"Send(node={self.node!r}, arg={self.arg!r}, timeout={self.timeout!r})"
        return f"Send(node={self.node!r}, arg={self.arg!r})"

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Send) and self.node == other.node and self.arg == other.arg
                and self.timeout == other.timeout)

    def _timeout_args(self) -> Optional[Tuple[float, float, bool]]:
        """(run_timeout, idle_timeout, heartbeat_only) for superstep._core, or None."""
        return self.timeout._args() if self.timeout is not None else None


def _coerce_timeout_seconds(value: Any, *, field: str) -> Optional[float]:
    if value is None:
        return None
    seconds = value.total_seconds() if isinstance(value, timedelta) else float(value)
    if seconds <= 0:
        raise ValueError(f"{field} must be greater than 0")
    return seconds


@dataclasses.dataclass(frozen=True)
class TimeoutPolicy:
    """How long one attempt of a node may take (LangGraph's TimeoutPolicy).

    `run_timeout`: a cap on the attempt's wall-clock time, never refreshed;
    `idle_timeout`: the longest time the attempt may go without progress. Progress
    (`refresh_on="auto"`) is a chunk written to the stream writer or
    `runtime.heartbeat()`; with `refresh_on="heartbeat"` only the latter. A node past
    either fails with NodeTimeoutError, retried under its retry policy.

    Only `async def` nodes may have one (as in LangGraph): the attempt's coroutine is
    cancelled when its time runs out. A coroutine that blocks its loop (time.sleep, a
    long computation) cannot be cancelled until it awaits; whatever it returns after its
    time ran out is dropped for the NodeTimeoutError."""

    run_timeout: Union[float, timedelta, None] = None
    idle_timeout: Union[float, timedelta, None] = None
    refresh_on: Literal["auto", "heartbeat"] = "auto"

    @classmethod
    def coerce(cls, value: Any) -> Optional["TimeoutPolicy"]:
        """Seconds (a number or timedelta: a run timeout) or a policy, as a policy with
        positive float fields; None for None (or a policy without either limit)."""
        if value is None:
            return None
        if isinstance(value, TimeoutPolicy):
            rt, it = value.run_timeout, value.idle_timeout
            if (value.refresh_on in ("auto", "heartbeat")
                    and (rt is None or (type(rt) is float and rt > 0))
                    and (it is None or (type(it) is float and it > 0))
                    and (rt is not None or it is not None)):
                return value  # coerced already (frozen: safe to share)
        else:
            if isinstance(value, bool) or not isinstance(value, (int, float, timedelta)):
                raise TypeError(
                    f"timeout must be a number of seconds, a timedelta or a TimeoutPolicy, "
                    f"got {value!r}")
            value = cls(run_timeout=value)
        if value.refresh_on not in ("auto", "heartbeat"):
            raise ValueError("refresh_on must be 'auto' or 'heartbeat'")
        run_timeout = _coerce_timeout_seconds(value.run_timeout, field="run_timeout")
        idle_timeout = _coerce_timeout_seconds(value.idle_timeout, field="idle_timeout")
        if run_timeout is None and idle_timeout is None:
            return None
        return cls(run_timeout=run_timeout, idle_timeout=idle_timeout,
                   refresh_on=value.refresh_on)

    def _args(self) -> Tuple[float, float, bool]:
        """(run_timeout, idle_timeout, heartbeat_only) with 0 for none (superstep._core)."""
        return (float(self.run_timeout or 0.0), float(self.idle_timeout or 0.0),
                self.refresh_on == "heartbeat")


@dataclasses.dataclass
class Interrupt:
    """A pending interrupt: the value given to interrupt() and its id."""

    value: Any
    id: str = ""

    @property
    def interrupt_id(self) -> str:
        return self.id


class Overwrite:
    """Overwrite(value): set the field to value, bypassing its reducer."""

    __slots__ = ("value",)

    def __init__(self, value: Any) -> None:
        self.value = value

    def __repr__(self) -> str:
        return f"Overwrite(value={self.value!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Overwrite) and self.value == other.value


@dataclasses.dataclass
class Command:
    """Command(update=, goto=, resume=, graph=): returned by a node, or given as input."""

    graph: Optional[str] = None
    update: Any = None
    resume: Any = None
    goto: Union[Send, Sequence[Union[Send, str]], str] = ()

    PARENT = "__parent__"

    def __class_getitem__(cls, item: Any) -> Any:  # Command[Literal["a", "b"]] in annotations
        return cls

    def __repr__(self) -> str:
        parts = ", ".join(
            f"{f.name}={getattr(self, f.name)!r}"
            for f in dataclasses.fields(self)
            if getattr(self, f.name) not in (None, ())
        )
        return f"Command({parts})"


def _default_retry_on(exc: BaseException) -> bool:
    # LangGraph's default_retry_on: programming errors are not retried.
    if isinstance(exc, ConnectionError):
        return True
    if isinstance(
        exc,
        (
            ValueError,
            TypeError,
            ArithmeticError,
            ImportError,
            LookupError,
            NameError,
            SyntaxError,
            RuntimeError,
            ReferenceError,
            StopIteration,
            StopAsyncIteration,
            OSError,
        ),
    ):
        return False
    return True


class RetryPolicy(NamedTuple):
    """How a node's failures are retried (attempts include the first)."""

    initial_interval: float = 0.5
    backoff_factor: float = 2.0
    max_interval: float = 128.0
    max_attempts: int = 3
    jitter: bool = True
    retry_on: Union[
        Type[Exception], Sequence[Type[Exception]], Callable[[Exception], bool]
    ] = _default_retry_on


def _should_retry(policy: RetryPolicy, exc: BaseException) -> bool:
    on = policy.retry_on
    if isinstance(on, Sequence) and not isinstance(on, str):
        return isinstance(exc, tuple(on))
    if isinstance(on, type) and issubclass(on, BaseException):
        return isinstance(exc, on)
    if callable(on):
        return bool(on(exc))
    raise TypeError("retry_on must be an Exception class, a list or tuple of them, or a callable")


def default_cache_key(*args: Any, **kwargs: Any) -> str:
    """LangGraph's default cache key function. A CachePolicy that keeps it lets the engine
    key a node's cache by a hash of the node's input, computed in C (the input is JSON);
    called from Python it gives the pickle-free equivalent, the input's JSON text."""
    from . import _core

    return _core.to_json([list(args), kwargs]) if kwargs else _core.to_json(list(args))


class CachePolicy(NamedTuple):
    """LangGraph's CachePolicy: a node's (or task's) writes are kept in the graph's cache
    (compile(cache=)) under key_func(input) for ttl seconds (None: as long as the cache)."""

    key_func: Callable[..., Any] = default_cache_key
    ttl: Optional[int] = None


class PregelTask(NamedTuple):
    id: str
    name: str
    path: Tuple[Any, ...]
    error: Optional[Exception] = None
    interrupts: Tuple[Interrupt, ...] = ()
    state: Any = None
    result: Optional[Any] = None


class StateSnapshot(NamedTuple):
    values: Any
    next: Tuple[str, ...]
    config: dict
    metadata: Optional[dict]
    created_at: Optional[str]
    parent_config: Optional[dict]
    tasks: Tuple[PregelTask, ...]
    interrupts: Tuple[Interrupt, ...] = ()


class StateUpdate(NamedTuple):
    values: Optional[dict]
    as_node: Optional[str] = None
    task_id: Optional[str] = None


def interrupt(value: Any) -> Any:
    """Pause the run and surface `value`; on resume, returns the resume value."""
    home = _aio.home()  # in a coroutine node: on its node's thread
    return home.call(_core.interrupt, value) if home is not None else _core.interrupt(value)


__all__ = [
    "All",
    "StreamMode",
    "Durability",
    "StreamWriter",
    "Send",
    "Interrupt",
    "Overwrite",
    "Command",
    "RetryPolicy",
    "TimeoutPolicy",
    "CachePolicy",
    "default_cache_key",
    "PregelTask",
    "StateSnapshot",
    "StateUpdate",
    "interrupt",
]
