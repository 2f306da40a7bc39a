"""LangGraph's StateGraph on superstep's C engine (langgraph.graph).

The builder here records the graph in Python; compile() hands it to the C
layer (superstep._core.Graph), which validates and freezes it. Nodes, routers
and custom reducers stay Python callables the engine calls on its worker
threads, holding the GIL only while they run. Built-in reducers
(operator.add on lists and numbers, add_messages) run in C.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import operator
import queue
import re
import threading
import types
import typing
from typing import Any, Callable, Dict, Iterator, List, Optional, Sequence, Tuple, Union

from . import _aio, _core, _schema
from .config import _local, get_stream_writer
from .messages import REMOVE_ALL_MESSAGES, _from_list, _from_value
from .errors import (
    EngineValueError,
    GraphInterrupt,
    InvalidUpdateError,
    NodeError,
    NodeTimeoutError,
    ParentCommand,
    SuperstepError,
    _from_code,
)
from .types import (
    CachePolicy,
    Command,
    Interrupt,
    Overwrite,
    PregelTask,
    RetryPolicy,
    Send,
    StateSnapshot,
    TimeoutPolicy,
    _should_retry,
    default_cache_key,
)

_core._init(
    send=Send, overwrite=Overwrite, graph_interrupt=GraphInterrupt, from_code=_from_code
)

START = "__start__"
END = "__end__"
_ROOT = "__root__"
_MISSING = object()
_DURABILITY = {None: 0, "async": 0, "sync": 1, "exit": 2}
_HEX32 = re.compile(r"^[0-9a-f]{32}$")


# ---- reducers ------------------------------------------------------------


def add_messages(left: Any, right: Any, **kwargs: Any) -> Any:
    """Merges two lists of messages by id (LangGraph's add_messages), in C. Messages are
    objects of superstep.messages (or LangChain's), dicts, (role, content) pairs or
    strings; the result holds message objects. In a state, the reducer runs in C."""
    if kwargs:
        raise TypeError(f"add_messages: unsupported options {sorted(kwargs)}")
    return _from_list(_core.reduce("add_messages", left, right))


def push_message(message: Any, *, state_key: Optional[str] = "messages") -> Any:
    """Writes `message` (which needs an id) to the running node's `state_key` field and
    streams it at once in stream_mode="messages" (LangGraph's push_message)."""
    _core.push_message(message, state_key)
    return _from_value(message) if isinstance(message, dict) else message


def _with_messages(state: Any, fields: Tuple[str, ...]) -> Any:
    """@p state with the add_messages fields' messages as message objects."""
    if not fields or not isinstance(state, dict):
        return state
    out = None
    for f in fields:
        v = state.get(f)
        if isinstance(v, list):
            if out is None:
                out = dict(state)
            out[f] = _from_list(v)
    return state if out is None else out


add_messages._sst_builtin = "add_messages"  # type: ignore[attr-defined]


class MessagesState(typing.TypedDict):
    messages: typing.Annotated[list, add_messages]


_SEQUENCE_ORIGINS = (list, tuple, typing.List, typing.Sequence)


def _base_type(hint: Any) -> Any:
    origin = typing.get_origin(hint)
    return origin if origin is not None else hint


def _default_of(base: Any) -> Any:
    import collections.abc as abc

    if base in (abc.Sequence, abc.MutableSequence, typing.Sequence):
        return []
    if base in (list, dict, str, int, float, tuple, bool):
        v = base()
        return list(v) if isinstance(v, tuple) else v
    return _MISSING


def _reducer_spec(base: Any, fn: Callable) -> Tuple[Any, Any]:
    """(reducer for _core: a built-in name or the callable, default or _MISSING)."""
    import collections.abc as abc

    builtin = getattr(fn, "_sst_builtin", None)
    if builtin is not None:
        return builtin, []
    if fn is operator.add:
        if base in (list, tuple, abc.Sequence, abc.MutableSequence, typing.List, typing.Sequence):
            return "append", []
        if base is int:
            return "sum", 0
        if base is float:
            return "sum", 0.0
    try:
        sig = inspect.signature(fn)
        positional = [
            p
            for p in sig.parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)
        ]
        if len(positional) < 2 and not any(p.kind == p.VAR_POSITIONAL for p in positional):
            raise ValueError(
                f"Invalid reducer signature. Expected (a, b) -> c. Got {sig}"
            )
    except (TypeError, ValueError) as e:
        if "Invalid reducer" in str(e):
            raise
    return fn, _default_of(base)


def _parse_hint(hint: Any) -> Tuple[Any, Any, bool]:
    """A field's (reducer, default, has_default) from its annotation."""
    if typing.get_origin(hint) is typing.Annotated:
        base, *meta = typing.get_args(hint)
        if meta and callable(meta[-1]) and not isinstance(meta[-1], type):
            spec, default = _reducer_spec(_base_type(base), meta[-1])
            return spec, default, default is not _MISSING
    # A plain field is LangGraph's LastValue: one write per superstep.
    return "unique", None, False


def _schema_hints(schema: Any) -> Dict[str, Any]:
    if schema is None or schema is dict:
        return {}
    try:
        return typing.get_type_hints(schema, include_extras=True)
    except Exception:
        return dict(getattr(schema, "__annotations__", {}))


# ---- nodes and routers ---------------------------------------------------


@dataclasses.dataclass(frozen=True)
class ExecutionInfo:
    """The running task as LangGraph's runtime.execution_info describes it."""

    checkpoint_id: str = ""
    checkpoint_ns: str = ""
    task_id: str = ""
    thread_id: Optional[str] = None
    run_id: Optional[str] = None
    node_attempt: int = 1
    node_first_attempt_time: Optional[float] = None


def _execution_info(config: Optional[dict]) -> ExecutionInfo:
    info = _core.node_info()
    conf = (config or {}).get("configurable") or {}
    return ExecutionInfo(
        checkpoint_id=str(conf.get("checkpoint_id") or ""),
        checkpoint_ns=info["checkpoint_ns"], task_id=info["task_id"],
        thread_id=info["thread_id"], run_id=(config or {}).get("run_id"),
        node_attempt=info["attempt"], node_first_attempt_time=info["first_attempt_time"],
    )


class Runtime:
    """LangGraph's Runtime: the run's context, store, stream writer and, in a node, its
    execution_info (attempt, first attempt's time, task id, namespace)."""

    def __init__(self, context: Any = None, store: Any = None, stream_writer: Any = None,
                 previous: Any = None, execution_info: Optional[ExecutionInfo] = None,
                 heartbeat: Optional[Callable[[], None]] = None) -> None:
        self.context = context
        self.store = store
        self.stream_writer = stream_writer or (lambda _c: None)
        self.previous = previous
        self.execution_info = execution_info
        # Progress for the node's idle timeout (TimeoutPolicy); a no-op outside a node.
        self.heartbeat = heartbeat or _aio.heartbeat


class _Run:
    """What nodes of one invoke receive besides the state."""

    __slots__ = ("config", "context", "store", "loop", "stop")

    def __init__(self, config: dict, context: Any, store: Any = None, loop: Any = None) -> None:
        self.config = config
        self.context = context
        self.store = store
        self.loop = loop  # the loop of coroutine nodes (superstep._aio), None: the module's
        # The run's stop (a threading.Event: the ainvoke caller was cancelled, the stream's
        # consumer went away): coroutine nodes are cancelled when it is set; None: never.
        self.stop: Any = None


def _set_stop(run: Any, stop: Any) -> None:
    """The run's stop for its coroutine nodes (an entrypoint's run has none: its tasks are
    not cancelled by it)."""
    if isinstance(run, _Run):
        run.stop = stop


def _is_async(fn: Any) -> bool:
    """An `async def` function (or a callable object whose __call__ is one)."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)
    )


def _wants(fn: Callable) -> Tuple[dict, int]:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}, 1
    names: dict = {}
    positional = 0
    for p in sig.parameters.values():
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional += 1
        names[p.name] = True
    return names, positional


def _required(fn: Callable) -> int:
    """How many positional parameters of fn have no default."""
    try:
        return sum(1 for p in inspect.signature(fn).parameters.values()
                   if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                   and p.default is p.empty)
    except (TypeError, ValueError):
        return 1


def _to_update(value: Any, where: str) -> dict:
    if isinstance(value, dict):
        return value
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
    if hasattr(value, "model_dump"):
        return value.model_dump()
    if hasattr(value, "dict") and hasattr(value, "__fields__"):
        return value.dict()
    raise InvalidUpdateError(f"Expected dict, got {value!r}")


def _parent_command(cmd: Command, where: str) -> tuple:
    """Command(graph=Command.PARENT) as the C layer takes it: (update, goto, True)."""
    update = cmd.update
    if update is not None:
        if isinstance(update, (list, tuple)) and all(
            isinstance(x, tuple) and len(x) == 2 for x in update
        ):
            merged: Dict[str, Any] = {}
            for k, v in update:
                merged.setdefault(k, []).append(v)
            update = {k: v[-1] for k, v in merged.items()}
        else:
            update = _to_update(update, where)
    goto = cmd.goto if cmd.goto else None
    if isinstance(goto, tuple):
        goto = list(goto)
    return (update, goto, True)


def _command_parts(cmd: Command, root: bool, where: str) -> Tuple[list, list]:
    if cmd.graph == Command.PARENT:
        raise InvalidUpdateError("Command(graph=Command.PARENT) must be returned alone")
    if cmd.graph is not None:
        raise InvalidUpdateError(f"Command graph {cmd.graph!r}: only Command.PARENT is known")
    updates: list = []
    if cmd.update is not None:
        if root:
            updates.append({_ROOT: cmd.update})
        elif isinstance(cmd.update, (list, tuple)) and all(
            isinstance(x, tuple) and len(x) == 2 for x in cmd.update
        ):
            updates.extend({k: v} for k, v in cmd.update)
        else:
            updates.append(_to_update(cmd.update, where))
    gotos: list = []
    if cmd.goto:
        if isinstance(cmd.goto, (str, Send)):
            gotos.append(cmd.goto)
        else:
            gotos.extend(cmd.goto)
    return updates, gotos


def _normalize(result: Any, root: bool, name: str) -> Any:
    if result is None:
        return None
    if isinstance(result, Command):
        if result.graph == Command.PARENT:
            return _parent_command(result, name)
        u, g = _command_parts(result, root, name)
        return (u or None, g or None)
    if root:
        if isinstance(result, list) and any(isinstance(x, Command) for x in result):
            updates, gotos = [], []
            for x in result:
                if isinstance(x, Command):
                    u, g = _command_parts(x, True, name)
                    updates += u
                    gotos += g
                else:
                    updates.append({_ROOT: x})
            return (updates or None, gotos or None)
        return ([{_ROOT: result}], None)
    if isinstance(result, dict):
        return ([result], None)
    if isinstance(result, (list, tuple)) and result and all(
        isinstance(x, (dict, Command)) for x in result
    ):
        updates, gotos = [], []
        for x in result:
            if isinstance(x, Command):
                u, g = _command_parts(x, False, name)
                updates += u
                gotos += g
            else:
                updates.append(x)
        return (updates or None, gotos or None)
    return ([_to_update(result, name)], None)


def _node_config(config: dict) -> dict:
    """The run's config as a node sees it: with its thread_id and checkpoint_ns (the
    task's namespace, "node:task_id", nested ones joined with "|"), as LangGraph's."""
    info = _core.node_info()
    conf = dict(config.get("configurable") or {})
    conf["checkpoint_ns"] = info["checkpoint_ns"]
    if info["thread_id"] is not None:
        conf.setdefault("thread_id", info["thread_id"])
    out = dict(config)
    out["configurable"] = conf
    return out


_PY_EXC_TAG = re.compile(r"\[py#\d+\] ")


def _error_param(fn: Callable) -> Optional[str]:
    """An error handler's parameter that receives the NodeError: the one typed NodeError,
    else one named `error` (LangGraph injects by the annotation)."""
    try:
        params = list(inspect.signature(fn).parameters.values())[1:]
    except (TypeError, ValueError):
        return None
    for p in params:
        a = p.annotation
        if a is NodeError or (isinstance(a, str) and a.rsplit(".", 1)[-1] == "NodeError"):
            return p.name
    return next((p.name for p in params if p.name == "error"), None)


def _node_error() -> Optional[NodeError]:
    """In an error handler: what failed, as LangGraph's NodeError."""
    got = _core.node_error()
    if got is None:
        return None
    node, exc, err = got
    if exc is None:  # not raised in this process (a resume after a restart) or the engine's
        exc = SuperstepError(_PY_EXC_TAG.sub("", str(err.get("message", ""))), err.get("code"),
                             node)
    return NodeError(node, exc)


class _Node:
    """A node as the C layer calls it: node(state, run, is_send) -> (updates, gotos).
    An error handler (handler=True) also receives the NodeError of what failed."""

    def __init__(self, name: str, fn: Callable, root: bool, retry: Sequence[RetryPolicy],
                 state_cls: Any = None, handler: bool = False) -> None:
        self.name = name
        self.fn = fn
        self.root = root
        self.retry = tuple(retry)
        self.state_cls = state_cls
        self.handler = handler
        names, positional = _wants(fn)
        self.error_param = _error_param(fn) if handler else None
        special = {"writer", "runtime", "store", "config", self.error_param}
        extra = [n for n in list(names)[1:positional] if n not in special] if positional >= 2 else []
        self.want_config = "config" in names or bool(extra)
        self.config_positional = "config" not in names and bool(extra)
        # With the error parameter in the way, a config parameter named otherwise is given by name.
        self.config_name = (
            extra[0] if self.error_param is not None and self.config_positional else None
        )
        self.want_writer = "writer" in names
        self.want_runtime = "runtime" in names
        self.want_store = "store" in names
        self.is_async = _is_async(fn)
        # A function of the state alone (most nodes): called by _call_plain, which does
        # what __call__ does for it in fewer steps (the per-call cost of W1 and W2).
        self.plain = not (
            root or state_cls is not None or handler or self.want_config or self.want_writer
            or self.want_runtime or self.want_store or self.is_async
        )

    # the add_messages fields: superstep._core gives their messages as objects
    msg_fields: Tuple[str, ...] = ()

    def _call_plain(self, state: Any, run: Optional[_Run]) -> Any:
        local = _local.__dict__  # this thread's: get_config() and get_store() read it
        prev = local.get("config"), local.get("store")
        config, store = (run.config, run.store) if run is not None else ({}, None)
        local["config"], local["store"] = config, store
        try:
            result = self.fn(state)
            if type(result) is types.CoroutineType:  # a coroutine from a plain def, as __call__
                result = _aio.run(result, getattr(run, "loop", None), config, store,
                                  getattr(run, "context", None), getattr(run, "stop", None))
        except ParentCommand:
            return None  # as in __call__
        finally:
            local["config"], local["store"] = prev
        if type(result) is dict:
            return ([result], None)
        return _normalize(result, False, self.name)

    def __call__(self, state: Any, run: Optional[_Run], is_send: bool) -> Any:
        if self.plain:
            return self._call_plain(state, run)
        # msg_fields' messages come as objects already (superstep._core)
        if self.root and not is_send:
            state = state.get(_ROOT) if isinstance(state, dict) else state
        elif self.state_cls is not None and not is_send and isinstance(state, dict):
            state = _coerce_state(self.state_cls, state)
        config = run.config if run is not None else {}
        if self.want_config:
            config = _node_config(config)
        kwargs: Dict[str, Any] = {}
        args = [state]
        if self.want_config:
            if self.config_name is not None:
                kwargs[self.config_name] = config
            elif self.config_positional:
                args.append(config)
            else:
                kwargs["config"] = config
        if self.handler:  # always taken: the registry does not keep the exception then
            error = _node_error()
            if self.error_param is not None:
                kwargs[self.error_param] = error
        if self.want_writer:
            kwargs["writer"] = _aio.emit if self.is_async else get_stream_writer()
        store = getattr(run, "store", None)
        if self.want_runtime:
            kwargs["runtime"] = Runtime(
                run.context if run is not None else None, store,
                _aio.emit if self.is_async else get_stream_writer(),
                execution_info=_execution_info(config), heartbeat=_aio.heartbeat,
            )
        if self.want_store:
            kwargs["store"] = store
        prev = getattr(_local, "config", None)
        prev_store = getattr(_local, "store", None)
        _local.config = config
        _local.store = store
        try:
            result = self.fn(*args, **kwargs)
            if self.is_async or type(result) is types.CoroutineType:
                result = _aio.run(result, getattr(run, "loop", None), config, store,
                                  getattr(run, "context", None), getattr(run, "stop", None))
        except ParentCommand:
            # A graph this node invoked ended with Command(graph=Command.PARENT): its
            # update and goto are this node's already (sst_node_run_subgraph).
            return None
        finally:
            _local.config = prev
            _local.store = prev_store
        return _normalize(result, self.root, self.name)

    def _retryable(self, exc: BaseException) -> bool:
        return any(_should_retry(p, exc) for p in self.retry)


def _coerce_state(cls: Any, state: dict) -> Any:
    if dataclasses.is_dataclass(cls):
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in state.items() if k in names})
    if hasattr(cls, "model_validate"):
        return cls.model_validate(state)
    if hasattr(cls, "parse_obj"):
        return cls.parse_obj(state)
    return state


class _Router:
    def __init__(self, fn: Callable, root: bool, mapping: Optional[dict], state_cls: Any) -> None:
        self.fn = fn
        self.root = root
        self.mapping = mapping
        self.state_cls = state_cls
        names, positional = _wants(fn)
        # A second positional parameter with a default (tools_condition's messages_key) is
        # not the config.
        self.want_config = "config" in names or (positional >= 2 and _required(fn) >= 2)

    def _map(self, r: Any) -> Any:
        if self.mapping is None or isinstance(r, Send):
            return r
        try:
            return self.mapping[r]
        except (KeyError, TypeError):
            raise InvalidUpdateError(f"Branch returned unknown destination: {r!r}") from None

    msg_fields: Tuple[str, ...] = ()

    def __call__(self, state: Any) -> Any:
        if self.root:
            state = state.get(_ROOT) if isinstance(state, dict) else state
        elif self.state_cls is not None and isinstance(state, dict):
            state = _coerce_state(self.state_cls, state)
        if self.want_config:
            r = self.fn(state, getattr(_local, "config", None) or {})
        else:
            r = self.fn(state)
        if type(r) is types.CoroutineType:  # an async def router (on the module's loop)
            r = _aio.run(r, None, {}, None, None)
        if isinstance(r, (list, tuple)):
            return [self._map(x) for x in r]
        return self._map(r)


def _retry_tuple(policy: Any) -> Tuple[RetryPolicy, ...]:
    return (policy,) if isinstance(policy, RetryPolicy) else tuple(policy)


def _retry_args(policies: Sequence[RetryPolicy]) -> list:
    # The last element: whether the policy retries a NodeTimeoutError (the engine's timeout
    # error never reaches Python's retry_on: python/src/graph.c, retry_from).
    sample = NodeTimeoutError("node", 0.0, kind="run", run_timeout=1.0)
    return [
        (p.max_attempts, p.initial_interval, p.backoff_factor, p.max_interval, p.jitter,
         _should_retry(p, sample))
        for p in policies
    ]


def _sync_timeout_unsupported(name: str, kind: str = "Node") -> ValueError:
    """LangGraph's refusal of a timeout on a sync node (langgraph._internal._timeout)."""
    return ValueError(
        "Node timeouts are only supported for async nodes because sync Python execution "
        f"cannot be safely cancelled in-process. {kind} {name!r} is sync.")


@dataclasses.dataclass
class _NodeSpec:
    name: str
    action: Any
    retry: Tuple[RetryPolicy, ...] = ()
    destinations: Optional[Tuple[str, ...]] = None
    defer: bool = False
    input_schema: Any = None
    metadata: Optional[dict] = None
    error_handler: Optional[Callable] = None
    cache_policy: Optional[CachePolicy] = None
    timeout: Optional[TimeoutPolicy] = None


class _CacheKey:
    """A node's CachePolicy.key_func as the C layer calls it (python/src/graph.c): given the
    node's input as the node sees it, it returns the key as a str (bytes as hex)."""

    def __init__(self, key_func: Callable, root: bool, state_cls: Any) -> None:
        self.key_func = key_func
        self.root = root
        self.state_cls = state_cls

    msg_fields: Tuple[str, ...] = ()

    def __call__(self, state: Any) -> str:
        if self.root and isinstance(state, dict) and _ROOT in state:
            state = state[_ROOT]
        elif self.state_cls is not None and isinstance(state, dict):
            try:
                state = _coerce_state(self.state_cls, state)
            except Exception:  # a Send's argument, not a state
                pass
        key = self.key_func(state)
        if isinstance(key, (bytes, bytearray)):
            return bytes(key).hex()
        if not isinstance(key, str):
            raise TypeError(f"cache key_func must return a str or bytes, got {type(key).__name__}")
        return key


def _cache_policy(policy: Any) -> CachePolicy:
    if not isinstance(policy, CachePolicy) and not (
        hasattr(policy, "key_func") and hasattr(policy, "ttl")
    ):
        raise TypeError(f"cache_policy must be a CachePolicy, got {policy!r}")
    ttl = policy.ttl
    if ttl is not None and (isinstance(ttl, bool) or not isinstance(ttl, (int, float))
                            or ttl < 0):
        raise ValueError(f"cache_policy: ttl must be a number of seconds >= 0, got {ttl!r}")
    if not callable(policy.key_func):
        raise TypeError(f"cache_policy: key_func must be callable, got {policy.key_func!r}")
    return policy


def _cache_args(policy: Optional[CachePolicy], root: bool, state_cls: Any,
                msg_fields: Tuple[str, ...]) -> Optional[tuple]:
    """(ttl_seconds, key or None) for _core.Graph: the default key is hashed in C."""
    if policy is None:
        return None
    key = None
    if policy.key_func is not default_cache_key:
        key = _CacheKey(policy.key_func, root, state_cls)
        key.msg_fields = msg_fields
    return (float(policy.ttl or 0), key)


def _fn_id(fn: Any) -> str:
    fn = getattr(fn, "__func__", fn)
    return f"{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', type(fn).__qualname__)}"


# ---- the builder -----------------------------------------------------------


class StateGraph:
    """A graph whose nodes read and update a shared state (LangGraph's StateGraph)."""

    def __init__(self, state_schema: Any = None, context_schema: Any = None, *,
                 input_schema: Any = None, output_schema: Any = None, **kwargs: Any) -> None:
        input_schema = kwargs.pop("input", input_schema)
        output_schema = kwargs.pop("output", output_schema)
        kwargs.pop("config_schema", None)
        if kwargs:
            raise TypeError(f"StateGraph: unexpected arguments {sorted(kwargs)}")
        if state_schema is None:
            raise ValueError("StateGraph needs a state schema (a TypedDict, e.g.)")
        self.state_schema = state_schema
        self.context_schema = context_schema
        self.input_schema = input_schema or state_schema
        self.output_schema = output_schema or state_schema
        self.root: Optional[Tuple[Any, Any, bool]] = None
        self.fields: Dict[str, Tuple[Any, Any, bool]] = {}
        self.closed = state_schema is not dict
        self.state_cls = (
            state_schema
            if dataclasses.is_dataclass(state_schema) or hasattr(state_schema, "model_validate")
            or hasattr(state_schema, "parse_obj")
            else None
        )
        if typing.get_origin(state_schema) is typing.Annotated:
            self.root = _parse_hint(state_schema)
            if self.root[0] == "unique":
                self.root = ("replace", None, False)
            self.closed = False
        else:
            for schema in (state_schema, input_schema, output_schema):
                for name, hint in _schema_hints(schema).items():
                    if name not in self.fields:
                        self.fields[name] = _parse_hint(hint)
        # Fields whose messages Python sees as message objects (add_messages reduces them).
        self.message_fields: Tuple[str, ...] = tuple(
            f for f, spec in ([(_ROOT, self.root)] if self.root else self.fields.items())
            if spec[0] == "add_messages"
        )
        self.nodes: Dict[str, _NodeSpec] = {}
        self.edges: List[Tuple[str, str]] = []
        self.joins: List[Tuple[Tuple[str, ...], str]] = []
        self.branches: List[Tuple[str, Callable, Any]] = []
        self.compiled = False
        # set_node_defaults: the retry policies and error handler of nodes without their own.
        self.default_retry: Tuple[RetryPolicy, ...] = ()
        self.default_error_handler: Optional[Callable] = None
        self.default_cache_policy: Optional[CachePolicy] = None
        self.default_timeout: Optional[TimeoutPolicy] = None

    def set_node_defaults(self, *, retry_policy: Any = None, cache_policy: Any = None,
                          error_handler: Optional[Callable] = None,
                          timeout: Any = None) -> "StateGraph":
        """Policies for every node without its own (LangGraph's set_node_defaults), applied
        at compile: `retry_policy` and `timeout` to every node, error handlers included;
        `error_handler` and `cache_policy` to the other nodes, the former run as node
        "__default_error_handler__"."""
        if cache_policy is not None:
            self.default_cache_policy = _cache_policy(cache_policy)
        if timeout is not None:
            self.default_timeout = TimeoutPolicy.coerce(timeout)
        if retry_policy is not None:
            self.default_retry = _retry_tuple(retry_policy)
        if error_handler is not None:
            if not callable(error_handler):
                raise TypeError(f"error_handler must be callable, got {error_handler!r}")
            self.default_error_handler = error_handler
        return self

    # LangGraph's names for the parts
    @property
    def channels(self) -> Dict[str, Any]:
        return dict(self.fields)

    def _check_name(self, name: str) -> None:
        if not isinstance(name, str) or not name:
            raise ValueError(f"Node name must be a non-empty str, got {name!r}")
        if name in self.nodes:
            raise ValueError(f"Node `{name}` already present.")
        if name in (START, END):
            raise ValueError(f"Node `{name}` is reserved.")
        for ch in ("|", ":"):
            if ch in name:
                raise ValueError(f"'{ch}' is a reserved character and is not allowed in node names.")

    def add_node(self, node: Any, action: Any = None, *, defer: bool = False,
                 metadata: Optional[dict] = None, input_schema: Any = None,
                 retry_policy: Any = None, cache_policy: Any = None,
                 destinations: Any = None, error_handler: Optional[Callable] = None,
                 timeout: Any = None, **kwargs: Any) -> "StateGraph":
        input_schema = kwargs.pop("input", input_schema)
        timeout = TimeoutPolicy.coerce(timeout)
        retry_policy = kwargs.pop("retry", retry_policy)
        if kwargs:
            raise TypeError(f"add_node: unexpected arguments {sorted(kwargs)}")
        if cache_policy is not None:
            cache_policy = _cache_policy(cache_policy)
        if action is None:
            action = node
            node = getattr(action, "name", None) or getattr(action, "__name__", None)
            if not isinstance(node, str):
                node = type(action).__name__
        if hasattr(node, "value") and not isinstance(node, str):  # an Enum member
            node = node.value
        self._check_name(node)
        if error_handler is not None and not callable(error_handler):
            raise TypeError(f"error_handler must be callable, got {error_handler!r}")
        retry = () if retry_policy is None else _retry_tuple(retry_policy)
        if isinstance(destinations, dict):
            destinations = tuple(destinations)
        elif destinations is not None:
            destinations = tuple(destinations)
        self.nodes[node] = _NodeSpec(node, action, retry, destinations, defer, input_schema,
                                     metadata, error_handler, cache_policy, timeout)
        return self

    def add_edge(self, start_key: Union[str, Sequence[str]], end_key: str) -> "StateGraph":
        if isinstance(start_key, str):
            if start_key == END:
                raise ValueError("END cannot be a start node")
            if end_key == START:
                raise ValueError("START cannot be an end node")
            self.edges.append((start_key, end_key))
        else:
            self.joins.append((tuple(start_key), end_key))
        return self

    def add_conditional_edges(self, source: str, path: Callable,
                              path_map: Optional[Union[dict, List[str]]] = None) -> "StateGraph":
        self.branches.append((source, path, path_map))
        return self

    def add_sequence(self, nodes: Sequence[Any]) -> "StateGraph":
        if len(nodes) < 1:
            raise ValueError("Sequence requires at least one node.")
        previous = None
        for item in nodes:
            if isinstance(item, tuple) and len(item) == 2:
                name, action = item
            else:
                action = item
                name = getattr(action, "name", None) or getattr(action, "__name__", None)
            if name in self.nodes:
                raise ValueError(
                    f"Node names must be unique: node with the name '{name}' already exists."
                )
            self.add_node(name, action)
            if previous is not None:
                self.add_edge(previous, name)
            previous = name
        return self

    def set_entry_point(self, key: str) -> "StateGraph":
        return self.add_edge(START, key)

    def set_conditional_entry_point(self, path: Callable, path_map: Any = None) -> "StateGraph":
        return self.add_conditional_edges(START, path, path_map)

    def set_finish_point(self, key: str) -> "StateGraph":
        return self.add_edge(key, END)

    def validate(self, interrupt: Optional[Sequence[str]] = None) -> "StateGraph":
        return self

    def compile(self, checkpointer: Any = None, *, cache: Any = None, store: Any = None,
                interrupt_before: Any = None, interrupt_after: Any = None,
                debug: bool = False, name: Optional[str] = None,
                workers: Optional[int] = None) -> "CompiledStateGraph":
        from .checkpoint import BaseCheckpointSaver

        # As a subgraph: True keeps its state across the parent's invokes (under "node"),
        # False keeps no checkpoints, None checkpoints per task in the parent's saver.
        checkpoints = 1 if checkpointer is True else 2 if checkpointer is False else 0
        if checkpointer in (True, False):
            checkpointer = None  # a subgraph's checkpoints: its parent's
        if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
            raise TypeError(
                f"Invalid checkpointer provided. Expected an instance of superstep's "
                f"BaseCheckpointSaver, `True`, `False`, or `None`. Received "
                f"{type(checkpointer).__name__}."
            )
        from .cache import BaseCache

        if cache is not None and not isinstance(cache, BaseCache):
            raise TypeError(
                f"Invalid cache provided. Expected a superstep cache (InMemoryCache, "
                f"SqliteCache). Received {type(cache).__name__}."
            )
        try:
            compiled = self._compile(checkpointer, interrupt_before, interrupt_after, name,
                                     workers, checkpoints, cache)
            compiled.store = store  # nodes' `store` argument, get_store() (superstep.store)
            return compiled
        except SuperstepError as e:
            # A graph the engine refuses is LangGraph's ValueError at compile.
            raise EngineValueError(str(e), e.code, e.node) from None

    def _compile(self, checkpointer: Any, interrupt_before: Any, interrupt_after: Any,
                 name: Optional[str], workers: Optional[int],
                 checkpoints: int = 0, cache: Any = None,
                 step_timeout: Optional[float] = None) -> "CompiledStateGraph":
        g = _core.Graph()
        root = self.root is not None
        if root:
            spec, default, has = self.root
            g.set_root(spec, default, has)
        else:
            for fname, (spec, default, has) in self.fields.items():
                g.add_field(fname, spec, default, has)
            g.set_closed(self.closed)
            if self.input_schema is not self.state_schema:
                g.set_fields("input", list(_schema_hints(self.input_schema)))
            if self.output_schema is not self.state_schema:
                g.set_fields("output", list(_schema_hints(self.output_schema)))
        if self.default_retry:
            g.set_default_retry(_retry_args(self.default_retry))
        # Timeouts: async nodes only, as LangGraph (a sync node cannot be cancelled).
        for spec_ in self.nodes.values():
            fns = [spec_.action] if (spec_.timeout or self.default_timeout) else []
            if self.default_timeout is not None and spec_.error_handler is not None:
                fns.append(spec_.error_handler)
            for fn in fns:
                if not isinstance(fn, CompiledStateGraph) and not _is_async(fn):
                    raise _sync_timeout_unsupported(spec_.name)
        if self.default_timeout is not None:
            if (self.default_error_handler is not None
                    and not _is_async(self.default_error_handler)):
                raise _sync_timeout_unsupported("__default_error_handler__")
            g.set_default_timeout(self.default_timeout._args())
        if self.default_error_handler is not None:
            if "__default_error_handler__" in self.nodes:
                raise ValueError(
                    "Auto-generated default error handler node `__default_error_handler__` "
                    "already exists."
                )
            h = _Node("__default_error_handler__", self.default_error_handler, root,
                      self.default_retry, self.state_cls, handler=True)
            h.msg_fields = self.message_fields
            g.set_default_error_handler(h)
        if self.default_cache_policy is not None:
            g.set_default_cache(_cache_args(self.default_cache_policy, root, self.state_cls,
                                            self.message_fields))
        for spec_ in self.nodes.values():
            retry = _retry_args(spec_.retry)
            input_fields = (
                list(_schema_hints(spec_.input_schema))
                if spec_.input_schema is not None and spec_.input_schema is not self.state_schema
                else None
            )
            node_state_cls = self.state_cls
            if spec_.input_schema is not None and (
                dataclasses.is_dataclass(spec_.input_schema)
                or hasattr(spec_.input_schema, "model_validate")
            ):
                node_state_cls = spec_.input_schema
            subgraph = spec_.action if isinstance(spec_.action, CompiledStateGraph) else None
            wrapper = (
                None if subgraph is not None
                else _Node(spec_.name, spec_.action, root, spec_.retry or self.default_retry,
                           node_state_cls)
            )
            if wrapper is not None:
                wrapper.msg_fields = self.message_fields
            handler = None
            if spec_.error_handler is not None:
                handler = _Node(f"__error_handler__{spec_.name}", spec_.error_handler, root,
                                self.default_retry, node_state_cls, handler=True)
                handler.msg_fields = self.message_fields
            g.add_node(
                spec_.name,
                wrapper,
                retry=retry or None,
                ends=list(spec_.destinations) if spec_.destinations else None,
                defer=spec_.defer,
                input_fields=input_fields,
                metadata=spec_.metadata,
                subgraph=subgraph._cg if subgraph is not None else None,
                error_handler=handler,
                cache=_cache_args(spec_.cache_policy, root, node_state_cls, self.message_fields),
                timeout=spec_.timeout._args() if spec_.timeout is not None else None,
            )
        for a, b in self.edges:
            g.add_edge(a, b)
        for sources, b in self.joins:
            g.add_join(list(sources), b)
        for source, path, path_map in self.branches:
            mapping = None
            c_map = None
            if isinstance(path_map, dict):
                if all(isinstance(k, str) for k in path_map):
                    c_map = dict(path_map)
                else:
                    mapping = dict(path_map)
                    c_map = list(dict.fromkeys(path_map.values()))
            elif path_map is not None:
                c_map = list(path_map)
            router = _Router(path, root, mapping, self.state_cls)
            router.msg_fields = self.message_fields
            g.add_conditional_edges(source, router, c_map)

        def names(v: Any) -> Optional[List[str]]:
            if v is None:
                return None
            if v == "*":
                return ["*"]
            return [getattr(x, "value", x) for x in v]

        # The graph's part of a shared cache: LangGraph keys a node's entries by its name and
        # function, so graphs compiled from the same nodes share them, others do not.
        cache_ns = None
        if cache is not None:
            import hashlib

            ids = sorted(f"{n}={_fn_id(s_.action)}" for n, s_ in self.nodes.items())
            cache_ns = "py-" + hashlib.sha1("\n".join(ids).encode()).hexdigest()[:16]
        cg = g.compile(
            checkpointer, names(interrupt_before), names(interrupt_after),
            workers if workers is not None else 4, checkpoints,
            cache._cache if cache is not None else None, cache_ns,
            float(step_timeout or 0.0),
        )
        self.compiled = True
        compiled = CompiledStateGraph(self, cg, checkpointer, name or "LangGraph")
        compiled.cache = cache
        compiled._step_timeout = step_timeout
        compiled._compile_args = (checkpointer, interrupt_before, interrupt_after, name, workers,
                                  checkpoints, cache)
        return compiled


# ---- the compiled graph -----------------------------------------------------


def _interrupts(items: Any) -> Tuple[Interrupt, ...]:
    return tuple(
        Interrupt(value=i.get("value"), id=i.get("id", ""))
        for i in items or ()
        if isinstance(i, dict) and "when" not in i
    )


def _json_config(config: dict) -> dict:
    """The part of a config the engine keeps: configurable scalars, run_id."""
    out: Dict[str, Any] = {}
    conf = config.get("configurable") or {}
    out["configurable"] = {
        k: v for k, v in conf.items()
        if isinstance(k, str) and isinstance(v, (str, int, float, bool)) and v is not None
    }
    cmap = conf.get("checkpoint_map")  # a subgraph checkpoint's ancestors (time travel to it)
    if isinstance(cmap, dict) and all(isinstance(v, str) for v in cmap.values()):
        out["configurable"]["checkpoint_map"] = dict(cmap)
    if isinstance(config.get("run_id"), str):
        out["run_id"] = config["run_id"]
    md = config.get("metadata")
    if isinstance(md, dict):
        try:
            _core.to_json(md)
            out["metadata"] = md
        except (TypeError, ValueError, OverflowError):
            pass
    return out


class DrawableGraph:
    """What get_graph() returns: the drawings of a compiled graph."""

    def __init__(self, cg: Any, xray: int) -> None:
        self._cg = cg
        self._xray = xray
        self._json = cg.graph_json(xray)

    @property
    def nodes(self) -> Dict[str, dict]:
        return {n["id"]: n for n in self._json.get("nodes", [])}

    @property
    def edges(self) -> List[dict]:
        return list(self._json.get("edges", []))

    def to_json(self) -> dict:
        return self._json

    def draw_mermaid(self, **kwargs: Any) -> str:
        return self._cg.mermaid(self._xray)


class CompiledStateGraph:
    """A compiled StateGraph: invoke, stream, state and history (LangGraph's names)."""

    def __init__(self, builder: StateGraph, cg: Any, checkpointer: Any, name: str) -> None:
        self.builder = builder
        self._cg = cg
        self.checkpointer = checkpointer
        self.name = name
        self._root = builder.root is not None
        self._msg_fields = builder.message_fields
        self.cache: Any = None  # compile(cache=)
        self._step_timeout: Optional[float] = None
        self._compile_args: Optional[tuple] = None

    @property
    def step_timeout(self) -> Optional[float]:
        """Seconds a superstep may take, its tasks' retries included (LangGraph's
        graph.step_timeout; None: no limit). A superstep past it fails the run with
        StepTimeoutError (a TimeoutError, as LangGraph's asyncio.TimeoutError); its running
        async nodes are cancelled. Set it before the graph runs (it recompiles the graph:
        a parent compiled with this graph as its node keeps the limit it had)."""
        return self._step_timeout

    @step_timeout.setter
    def step_timeout(self, value: Optional[float]) -> None:
        if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float))
                                  or not value > 0):
            raise ValueError(f"step_timeout must be a positive number of seconds, got {value!r}")
        if self._compile_args is None:
            raise ValueError("step_timeout: this graph cannot be recompiled")
        value = float(value) if value is not None else None
        if value == self._step_timeout:
            return
        other = self.builder._compile(*self._compile_args, step_timeout=value)
        self._cg = other._cg
        self._step_timeout = value

    # -- running --

    def _prepare(self, input: Any, config: Optional[dict], context: Any,
                 interrupt_before: Any, interrupt_after: Any, durability: Any,
                 subgraphs: bool = False) -> Dict[str, Any]:
        config = dict(config or {})
        conf = dict(config.get("configurable") or {})
        config["configurable"] = conf
        limit = config.get("recursion_limit", 25)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            raise ValueError("recursion_limit must be at least 1")
        if context is None:
            context = config.get("context")
        kw: Dict[str, Any] = dict(
            thread_id=conf.get("thread_id") if self.checkpointer is not None else None,
            checkpoint_id=conf.get("checkpoint_id"),
            config=_json_config(config),
            pyconfig=_Run(config, context, getattr(self, "store", None), _aio.caller_loop()),
            recursion_limit=limit,
            durability=_DURABILITY[durability],
            subgraphs=subgraphs,
        )
        if context is not None:
            try:
                _core.to_json(context)
                kw["context"] = context
            except (TypeError, ValueError, OverflowError):
                pass
        if self.checkpointer is not None and kw["thread_id"] is None:
            raise ValueError(
                "Checkpointer requires one or more of the following 'configurable' keys: "
                "thread_id, checkpoint_ns, checkpoint_id"
            )
        if self.checkpointer is not None and not isinstance(kw["thread_id"], str):
            kw["thread_id"] = str(kw["thread_id"])

        def names(v: Any) -> Optional[List[str]]:
            if v is None:
                return None
            return ["*"] if v == "*" else [getattr(x, "value", x) for x in v]

        kw["interrupt_before"] = names(interrupt_before)
        kw["interrupt_after"] = names(interrupt_after)
        if isinstance(input, Command):
            if input.resume is not None:
                r = input.resume
                if (isinstance(r, dict) and r
                        and all(isinstance(k, str) and _HEX32.match(k) for k in r)):
                    kw["resume_by_id"] = r
                else:
                    kw["resume"] = r
                    kw["has_resume"] = True
            if input.update is not None:
                if self._root:
                    kw["update"] = {_ROOT: input.update}
                elif isinstance(input.update, (list, tuple)):
                    merged: Dict[str, Any] = {}
                    for k, v in input.update:
                        merged[k] = v
                    kw["update"] = merged
                else:
                    kw["update"] = _to_update(input.update, "Command update")
            if input.goto:
                goto = input.goto
                kw["goto"] = [goto] if isinstance(goto, (str, Send)) else list(goto)
            kw["input"] = None
        elif input is None:
            kw["input"] = None
        else:
            if self._root:
                kw["input"] = {_ROOT: input}
            else:
                kw["input"] = _to_update(input, "input")
            kw["has_input"] = True
        return kw

    def _output(self, state: Any) -> Any:
        state = _with_messages(state, self._msg_fields)
        if self._root:
            return state.get(_ROOT) if isinstance(state, dict) else state
        return state

    def invoke(self, input: Any, config: Optional[dict] = None, *,
               context: Any = None, stream_mode: Any = "values", output_keys: Any = None,
               interrupt_before: Any = None, interrupt_after: Any = None,
               durability: Any = None, debug: Any = None, _stop: Any = None,
               **kwargs: Any) -> Any:
        """Runs the graph to its end (or an interrupt) and returns the final state.
        (`_stop`: a threading.Event that stops the run, ainvoke's.)"""
        if self._runs_in_node(input, stream_mode, interrupt_before, interrupt_after):
            return self._invoke_in_node(input, output_keys)
        if stream_mode != "values":
            chunks = list(
                self.stream(input, config, context=context, stream_mode=stream_mode,
                            interrupt_before=interrupt_before, interrupt_after=interrupt_after,
                            durability=durability)
            )
            return chunks
        kw = self._prepare(input, config, context, interrupt_before, interrupt_after, durability)
        if _stop is not None:
            kw["stop"] = _stop
            _set_stop(kw["pyconfig"], _stop)
        status, state, ints = self._cg.run(**kw)
        out = self._output(state)
        if output_keys is not None and isinstance(out, dict):
            if isinstance(output_keys, str):
                out = out.get(output_keys)
            else:
                out = {k: out[k] for k in output_keys if k in out}
        if status == "interrupted":
            its = _interrupts(ints)
            if its:
                if isinstance(out, dict):
                    out = dict(out)
                    out["__interrupt__"] = list(its)
                elif out is None or self._root:
                    out = {"__interrupt__": list(its)} if out is None else out
        return out

    def _runs_in_node(self, input: Any, stream_mode: Any, interrupt_before: Any,
                      interrupt_after: Any) -> bool:
        """Whether invoke() runs this graph as a subgraph of the node calling it: inside a
        node, without a checkpointer of its own (LangGraph's subgraph in a function)."""
        return (
            # An entrypoint (superstep.func) called in a node runs as its own invoke for now.
            hasattr(self._cg, "run_in_node")
            and self.checkpointer is None and _core.in_node() and stream_mode == "values"
            and interrupt_before is None and interrupt_after is None
            and not isinstance(input, Command)
        )

    def _runs_in_node_kw(self, input: Any, kwargs: dict) -> bool:
        """Whether an ainvoke from a coroutine node would run as that node's subgraph (the
        conditions of _runs_in_node but the thread's, which the home thread checks)."""
        return (
            hasattr(self._cg, "run_in_node") and self.checkpointer is None
            and kwargs.get("stream_mode", "values") == "values"
            and kwargs.get("interrupt_before") is None and kwargs.get("interrupt_after") is None
            and not isinstance(input, Command)
        )

    def _invoke_in_node(self, input: Any, output_keys: Any) -> Any:
        if input is None:
            inp = None
        elif self._root:
            inp = {_ROOT: input}
        else:
            inp = _to_update(input, "input")
        out = self._output(self._cg.run_in_node(inp))
        if output_keys is not None and isinstance(out, dict):
            if isinstance(output_keys, str):
                return out.get(output_keys)
            return {k: out[k] for k in output_keys if k in out}
        return out

    def _chunk(self, mode: str, ev: Any) -> Any:
        if mode == "values":
            ev = _with_messages(ev, self._msg_fields)
            if isinstance(ev, dict) and "__interrupt__" in ev:
                ev = dict(ev)
                ev["__interrupt__"] = _interrupts(ev["__interrupt__"])
                if self._root and set(ev) <= {"__interrupt__", _ROOT}:
                    if _ROOT in ev and len(ev) == 2:
                        return ev[_ROOT]
                    return {"__interrupt__": ev["__interrupt__"]}
                return ev
            return self._output(ev)
        if mode == "updates" and isinstance(ev, dict):
            out = {}
            for k, v in ev.items():
                if k == "__interrupt__":
                    out[k] = _interrupts(v)
                elif self._msg_fields and isinstance(v, dict) and not self._root:
                    out[k] = _with_messages(v, self._msg_fields)
                elif self._msg_fields and isinstance(v, list) and not self._root:
                    out[k] = [_with_messages(x, self._msg_fields) for x in v]
                elif self._root and isinstance(v, dict) and set(v) == {_ROOT}:
                    out[k] = v[_ROOT]
                elif self._root and isinstance(v, list):
                    out[k] = [x[_ROOT] if isinstance(x, dict) and set(x) == {_ROOT} else x
                              for x in v]
                else:
                    out[k] = v
            return out
        if mode == "messages" and isinstance(ev, list) and len(ev) == 2:
            return (_from_value(ev[0]), ev[1])
        if mode in ("tasks", "debug") and isinstance(ev, dict):
            payload = ev.get("payload") if mode == "debug" else ev
            for p in payload if isinstance(payload, list) else [payload]:
                if isinstance(p, dict) and isinstance(p.get("triggers"), list):
                    p["triggers"] = tuple(p["triggers"])
        return ev

    def stream(self, input: Any, config: Optional[dict] = None, *,
               context: Any = None, stream_mode: Any = None, output_keys: Any = None,
               interrupt_before: Any = None, interrupt_after: Any = None,
               durability: Any = None, subgraphs: bool = False, debug: Any = None,
               **kwargs: Any) -> Iterator[Any]:
        """Runs the graph, yielding chunks as supersteps commit (LangGraph's stream)."""
        if stream_mode is None:
            stream_mode = "updates"  # LangGraph's default for a StateGraph
        single = isinstance(stream_mode, str)
        modes = [stream_mode] if single else list(stream_mode)
        bits = 0
        for m in modes:
            if m not in _core.STREAM_MODES:
                raise ValueError(f"Unknown stream mode {m!r}")
            bits |= _core.STREAM_MODES[m]
        kw = self._prepare(input, config, context, interrupt_before, interrupt_after, durability,
                           subgraphs)
        q: "queue.SimpleQueue[Any]" = queue.SimpleQueue()
        stop = kwargs.get("_stop") or threading.Event()
        _set_stop(kw["pyconfig"], stop)

        def on_event(mode: str, ns: Optional[str], node: Optional[str], ev: Any) -> bool:
            if stop.is_set():
                return False
            q.put((0, mode, ns, ev))
            return True

        def runner() -> None:
            try:
                q.put((1, self._cg.run(on_event=on_event, stream_modes=bits, stop=stop, **kw)))
            except BaseException as e:  # handed to the consumer, raised there
                q.put((2, e))

        t = threading.Thread(target=runner, name="superstep-stream", daemon=True)
        try:
            t.start()  # (a Ctrl-C may land in its wait: the run is stopped too)
            while True:
                item = q.get()
                if item[0] == 1:
                    break
                if item[0] == 2:
                    raise item[1]
                _, mode, ns, ev = item
                chunk = self._chunk(mode, ev)
                if subgraphs:
                    nst = tuple(ns.split("|")) if ns else ()
                    yield (nst, chunk) if single else (nst, mode, chunk)
                else:
                    yield chunk if single else (mode, chunk)
        finally:
            stop.set()
            try:
                t.join()
            except RuntimeError:  # interrupted before the thread said it started
                pass

    def batch(self, inputs: Sequence[Any], config: Any = None, **kwargs: Any) -> List[Any]:
        configs = config if isinstance(config, list) else [config] * len(inputs)
        return [self.invoke(i, c, **kwargs) for i, c in zip(inputs, configs)]

    async def ainvoke(self, input: Any, config: Optional[dict] = None, **kwargs: Any) -> Any:
        """invoke() on a thread; `async def` nodes run on this (the caller's) loop. Inside
        an `async def` node, a graph without a checkpointer of its own runs as a subgraph of
        that node, as invoke() does inside a sync node: the call is made on the node's home
        thread (superstep._aio) while this coroutine waits and the loop runs on."""
        h = _aio.home()
        if h is not None and self._runs_in_node_kw(input, kwargs):
            return await h.acall(functools.partial(self.invoke, input, config, **kwargs))
        stop = threading.Event()
        token = _aio._LOOP.set(asyncio.get_running_loop())
        try:
            fut = asyncio.ensure_future(
                asyncio.to_thread(self.invoke, input, config, _stop=stop, **kwargs))
        finally:
            _aio._LOOP.reset(token)
        try:
            return await asyncio.shield(fut)
        except asyncio.CancelledError:
            # The caller was cancelled: the run stops (its coroutine nodes cancelled, no
            # further superstep); this loop runs them to their end meanwhile.
            stop.set()
            try:
                await fut
            except BaseException:
                pass
            raise

    async def astream(self, input: Any, config: Optional[dict] = None, **kwargs: Any):
        """stream() on a thread, its chunks handed to this loop as they come; `async def`
        nodes run on this (the caller's) loop."""
        loop = asyncio.get_running_loop()
        q: "asyncio.Queue[Any]" = asyncio.Queue()
        stop = threading.Event()

        def put(item: Any) -> None:
            try:
                loop.call_soon_threadsafe(q.put_nowait, item)
            except RuntimeError:  # the loop closed: nobody listens any more
                stop.set()

        def produce() -> None:
            gen = self.stream(input, config, _stop=stop, **kwargs)
            try:
                for chunk in gen:
                    put((0, chunk))
                    if stop.is_set():
                        break
            except BaseException as e:  # handed to the consumer, raised there
                put((2, e))
                return
            finally:
                gen.close()
            put((1, None))

        token = _aio._LOOP.set(loop)
        try:
            producer = asyncio.ensure_future(asyncio.to_thread(produce))
        finally:
            _aio._LOOP.reset(token)
        try:
            while True:
                kind, item = await q.get()
                if kind == 1:
                    break
                if kind == 2:
                    raise item
                yield item
        finally:
            stop.set()  # the run stops at its next event (stream())
            await asyncio.shield(producer)

    # -- the node cache --

    def clear_cache(self, nodes: Optional[Sequence[str]] = None) -> None:
        """Drops the cached writes of `nodes` (default: every node) from the graph's cache
        (LangGraph's clear_cache); names of no node are ignored."""
        if self.cache is None:
            raise ValueError("No cache is set for this graph. Cannot clear cache.")
        known = self.builder.nodes
        names = [n for n in nodes if n in known] if nodes else list(known)
        if names:  # (an empty list would clear every node)
            self._cg.clear_cache(names)

    async def aclear_cache(self, nodes: Optional[Sequence[str]] = None) -> None:
        """clear_cache() off the loop."""
        await asyncio.to_thread(self.clear_cache, nodes)

    # -- state --

    def _thread(self, config: Optional[dict], what: str) -> Tuple[Optional[str], Optional[str], str]:
        if self.checkpointer is None:
            raise ValueError("No checkpointer set")
        conf = (config or {}).get("configurable") or {}
        tid = conf.get("thread_id")
        return (None if tid is None else str(tid), conf.get("checkpoint_id"),
                conf.get("checkpoint_ns", ""))

    def _snapshot(self, d: Any) -> StateSnapshot:
        tasks = []
        for t in d.get("tasks") or ():
            st = t.get("state")
            if isinstance(st, dict) and "values" in st and "next" in st:
                st = self._snapshot(st)
            tasks.append(PregelTask(
                t.get("id"), t.get("name"), tuple(t.get("path") or ()), t.get("error"),
                _interrupts(t.get("interrupts")), st, t.get("result"),
            ))
        return StateSnapshot(
            values=self._output(d.get("values") or {}),
            next=tuple(d.get("next") or ()),
            config=d.get("config"),
            metadata=d.get("metadata"),
            created_at=d.get("created_at"),
            parent_config=d.get("parent_config"),
            tasks=tuple(tasks),
            interrupts=_interrupts(d.get("interrupts")),
        )

    def get_state(self, config: dict, *, subgraphs: bool = False) -> StateSnapshot:
        tid, cid, ns = self._thread(config, "get_state")
        return self._snapshot(self._cg.get_state(tid, cid, ns or None, subgraphs))

    def get_state_history(self, config: dict, *, filter: Optional[dict] = None,
                          before: Optional[dict] = None,
                          limit: Optional[int] = None) -> Iterator[StateSnapshot]:
        tid, cid, ns = self._thread(config, "get_state_history")
        items = self._cg.history(tid, filter, 0, ns or None)
        bid = ((before or {}).get("configurable") or {}).get("checkpoint_id")
        if cid is not None:
            items = [i for i in items if i.get("checkpoint_id", "") <= cid]
        if bid is not None:
            items = [i for i in items if i.get("checkpoint_id", "") < bid]
        if limit is not None:
            items = items[:limit]
        for i in items:
            yield self._snapshot(i)

    def update_state(self, config: dict, values: Any, as_node: Optional[str] = None,
                     task_id: Optional[str] = None) -> dict:
        tid, cid, ns = self._thread(config, "update_state")
        if hasattr(as_node, "value") and not isinstance(as_node, str):
            as_node = as_node.value
        if values is not None:
            values = {_ROOT: values} if self._root else _to_update(values, "update_state values")
        snap = self._cg.update_state(tid, cid, values, as_node, ns or None)
        return snap.get("config")

    def bulk_update_state(self, config: dict, supersteps: Sequence[Sequence[Any]]) -> dict:
        tid, cid, ns = self._thread(config, "bulk_update_state")
        steps = []
        for step in supersteps:
            ups = []
            for u in step:
                values = u.values if hasattr(u, "values") and not isinstance(u, dict) else u["values"]
                as_node = u.as_node if hasattr(u, "as_node") and not isinstance(u, dict) else u.get("as_node")
                if values is not None:
                    values = {_ROOT: values} if self._root else _to_update(values, "values")
                ups.append({"values": values, "as_node": as_node})
            steps.append(ups)
        if not steps:
            raise ValueError("No supersteps provided")
        snap = self._cg.update_state(tid, cid, steps, None, ns or None, True)
        return snap.get("config")

    # -- state, from a coroutine (the engine's calls on a thread, off the loop) --

    async def aget_state(self, config: dict, *, subgraphs: bool = False) -> StateSnapshot:
        """get_state() off the loop."""
        return await asyncio.to_thread(self.get_state, config, subgraphs=subgraphs)

    async def aget_state_history(self, config: dict, *, filter: Optional[dict] = None,
                                 before: Optional[dict] = None, limit: Optional[int] = None):
        """get_state_history() as an async iterator (read off the loop)."""
        items = await asyncio.to_thread(
            lambda: list(self.get_state_history(config, filter=filter, before=before,
                                                limit=limit))
        )
        for item in items:
            yield item

    async def aupdate_state(self, config: dict, values: Any, as_node: Optional[str] = None,
                            task_id: Optional[str] = None) -> dict:
        """update_state() off the loop."""
        return await asyncio.to_thread(self.update_state, config, values, as_node, task_id)

    async def abulk_update_state(self, config: dict,
                                 supersteps: Sequence[Sequence[Any]]) -> dict:
        """bulk_update_state() off the loop."""
        return await asyncio.to_thread(self.bulk_update_state, config, supersteps)

    async def abatch(self, inputs: Sequence[Any], config: Any = None, *,
                     return_exceptions: bool = False, **kwargs: Any) -> List[Any]:
        """ainvoke() of each input (with its config, or the one config) at once."""
        configs = config if isinstance(config, list) else [config] * len(inputs)
        if len(configs) != len(inputs):
            raise ValueError("abatch: give one config, or one per input")
        return list(await asyncio.gather(
            *(self.ainvoke(i, c, **kwargs) for i, c in zip(inputs, configs)),
            return_exceptions=return_exceptions,
        ))

    # -- drawing --

    # -- schemas (LangGraph's get_*_jsonschema) --

    @staticmethod
    def _jsonschema(schema: Any, title: str) -> dict:
        got = _schema.class_schema(schema) if isinstance(schema, type) else None
        return got if got is not None else _schema.titled(_schema.schema_of(schema), title)

    def get_input_jsonschema(self, config: Any = None) -> dict:
        """The JSON schema of the graph's input (its input schema, else its state's)."""
        return self._jsonschema(self.builder.input_schema, "LangGraphInput")

    def get_output_jsonschema(self, config: Any = None) -> dict:
        """The JSON schema of the graph's output (its output schema, else its state's)."""
        return self._jsonschema(self.builder.output_schema, "LangGraphOutput")

    def get_context_jsonschema(self, config: Any = None) -> Optional[dict]:
        """The JSON schema of the run's context (context_schema=), None without one."""
        ctx = getattr(self.builder, "context_schema", None)
        return None if ctx is None else self._jsonschema(ctx, "Context")

    def get_graph(self, config: Any = None, *, xray: Union[int, bool] = False) -> DrawableGraph:
        level = 0xFFFFFFFF if xray is True else int(xray)
        return DrawableGraph(self._cg, level)

    @property
    def warnings(self) -> List[str]:
        return self._cg.warnings()


def _submodule(name: str, **attrs: Any) -> None:
    """LangGraph's module paths under superstep.graph (superstep.graph.message, .state), so
    that `from langgraph.graph.message import ...` ports by changing the package name."""
    import sys
    import types as _types

    m = _types.ModuleType(f"{__name__}.{name}")
    m.__dict__.update(attrs)
    m.__all__ = list(attrs)
    sys.modules[m.__name__] = m
    globals()[name] = m


_submodule("message", add_messages=add_messages, MessagesState=MessagesState,
           push_message=push_message, REMOVE_ALL_MESSAGES=REMOVE_ALL_MESSAGES)
_submodule("state", StateGraph=StateGraph, CompiledStateGraph=CompiledStateGraph)

__all__ = [
    "StateGraph",
    "CompiledStateGraph",
    "START",
    "END",
    "MessagesState",
    "add_messages",
    "push_message",
    "Runtime",
    "ExecutionInfo",
]
