"""LangGraph's exception names (langgraph.errors), raised by superstep's engine.

An exception a node raises comes out of invoke/stream as the same object; the
classes here are for the engine's own errors, chosen by its error code.
"""


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


def _from_code(code, message, node=None):
    """The exception for an engine error (called by superstep._core)."""
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
]
