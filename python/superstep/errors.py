"""LangGraph's exception names (langgraph.errors), raised by superstep's engine.

An exception a node raises comes out of invoke/stream as the same object; the
classes here are for the engine's own errors, chosen by its error code.
"""


import re


class GraphRecursionError(RecursionError):
    """The run reached its recursion_limit (supersteps) without finishing."""


class InvalidUpdateError(Exception):
    """A node or input wrote what the state cannot take (two writes to a plain
    field in one step, a bad type for a reducer, an unknown route)."""


class GraphBubbleUp(Exception):
    pass


class GraphInterrupt(GraphBubbleUp):
    """Raised inside a node by interrupt(): the run pauses for input."""

    def __init__(self, interrupts=()):
        super().__init__(interrupts)
        self.interrupts = interrupts


class NodeInterrupt(GraphInterrupt):
    pass


class ParentCommand(GraphBubbleUp):
    pass


class EmptyInputError(Exception):
    pass


class TaskNotFound(Exception):
    pass


class EmptyChannelError(Exception):
    pass


class CheckpointNotLatest(Exception):
    pass


class SuperstepError(Exception):
    """An engine error without a LangGraph counterpart; `code` is its name ("SST_EIO")."""

    def __init__(self, message, code=None, node=None):
        super().__init__(message)
        self.code = code
        self.node = node


class InvalidUpdate(InvalidUpdateError, SuperstepError):
    def __init__(self, message, code=None, node=None):
        SuperstepError.__init__(self, message, code, node)


class RecursionLimit(GraphRecursionError, SuperstepError):
    def __init__(self, message, code=None, node=None):
        SuperstepError.__init__(self, message, code, node)


class EngineValueError(ValueError, SuperstepError):
    def __init__(self, message, code=None, node=None):
        SuperstepError.__init__(self, message, code, node)


class EngineRuntimeError(RuntimeError, SuperstepError):
    def __init__(self, message, code=None, node=None):
        SuperstepError.__init__(self, message, code, node)


class NodeTimeoutError(Exception):
    """A node's attempt ran past its TimeoutPolicy (LangGraph's NodeTimeoutError): not a
    TimeoutError (an OSError), so the default RetryPolicy retries it.

    `kind` ("run" or "idle") and `timeout` say which limit fired, `elapsed` when (seconds).
    `run_timeout` and `idle_timeout` are the configured limits; raised by the engine, the
    limit that did not fire is not known here and is None."""

    def __init__(self, node, elapsed, *, kind, idle_timeout=None, run_timeout=None):
        if kind == "idle":
            if idle_timeout is None:
                raise ValueError("idle_timeout is required when kind='idle'")
            message = (f"Node '{node}' exceeded its idle timeout of {idle_timeout:.3f}s "
                       f"without making progress (elapsed: {elapsed:.3f}s).")
            self.timeout = idle_timeout
        elif kind == "run":
            if run_timeout is None:
                raise ValueError("run_timeout is required when kind='run'")
            message = (f"Node '{node}' exceeded its run timeout of {run_timeout:.3f}s "
                       f"(elapsed: {elapsed:.3f}s).")
            self.timeout = run_timeout
        else:
            raise ValueError("kind must be 'idle' or 'run'")
        super().__init__(message)
        self.node = node
        self.elapsed = elapsed
        self.kind = kind
        self.idle_timeout = idle_timeout
        self.run_timeout = run_timeout


class StepTimeoutError(SuperstepError, TimeoutError):
    """A superstep ran past the compiled graph's step_timeout: LangGraph raises
    asyncio.TimeoutError (TimeoutError, which this is)."""


class NodeError:
    """What failed, as an error handler receives it (LangGraph's NodeError): give a handler
    a parameter typed NodeError (or named `error`).

    `node` is the node that failed; `error` the exception it raised (the very object while
    this process holds it; after a restart, an engine error carrying its text)."""

    __slots__ = ("node", "error")

    def __init__(self, node, error):
        self.node = node
        self.error = error

    def __repr__(self):
        return f"NodeError(node={self.node!r}, error={self.error!r})"

    def __eq__(self, other):
        return isinstance(other, NodeError) and (self.node, self.error) == (other.node, other.error)

    __hash__ = None


_TIMEOUT_MSG = re.compile(
    r"'(?P<node>[^']*)' exceeded its (?P<kind>run|idle) timeout of (?P<limit>[0-9.]+)s"
    r".*\(elapsed: (?P<elapsed>[0-9.]+)s\)")


def _from_code(code, message, node=None):
    """The exception for an engine error (called by superstep._core)."""
    if code == "SST_ETIMEOUT":
        m = _TIMEOUT_MSG.search(message)
        if m is not None:
            limit = float(m["limit"])
            return NodeTimeoutError(
                node or m["node"], float(m["elapsed"]), kind=m["kind"],
                run_timeout=limit if m["kind"] == "run" else None,
                idle_timeout=limit if m["kind"] == "idle" else None)
        if "superstep" in message and "timed out" in message:
            return StepTimeoutError(message, code, node)
    if code == "SST_EINVAL" and "multiple pending interrupts" in message:
        return EngineRuntimeError(message, code, node)  # LangGraph raises RuntimeError
    if code == "SST_ELIMIT" and "ecursion" in message:
        return RecursionLimit(message, code, node)
    if code in ("SST_ECONFLICT", "SST_ETYPE"):
        return InvalidUpdate(message, code, node)
    if code == "SST_EINVAL":
        if node is not None or "route" in message or "goto" in message or "unknown node" in message:
            return InvalidUpdate(message, code, node)
        return EngineValueError(message, code, node)
    if code == "SST_ENOTFOUND":
        return EngineValueError(message, code, node)
    return SuperstepError(message, code, node)


__all__ = [
    "GraphRecursionError",
    "InvalidUpdateError",
    "GraphBubbleUp",
    "GraphInterrupt",
    "NodeInterrupt",
    "ParentCommand",
    "EmptyInputError",
    "TaskNotFound",
    "EmptyChannelError",
    "CheckpointNotLatest",
    "SuperstepError",
    "NodeError",
    "NodeTimeoutError",
    "StepTimeoutError",
]
