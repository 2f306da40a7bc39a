"""LangGraph's langgraph.runtime: Runtime (context, store, stream_writer) and get_runtime()."""

from __future__ import annotations

from typing import Any

from .config import _local, get_stream_writer
from .graph import ExecutionInfo, Runtime


def get_runtime(context_schema: Any = None) -> Runtime:
    """The running node's or task's Runtime."""
    if getattr(_local, "config", None) is None:
        raise RuntimeError("Called get_runtime outside of a runnable context")
    return Runtime(getattr(_local, "context", None), getattr(_local, "store", None),
                   get_stream_writer())


__all__ = ["ExecutionInfo", "Runtime", "get_runtime"]
