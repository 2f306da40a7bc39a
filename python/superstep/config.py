"""Inside a node: the run's config and the custom stream writer."""

from __future__ import annotations

import threading
from typing import Any

from . import _core

_local = threading.local()


def get_config() -> dict:
    """The config of the running node's invoke."""
    cfg = getattr(_local, "config", None)
    if cfg is None:
        raise RuntimeError("Called get_config outside of a runnable context")
    return cfg


def get_stream_writer():
    """A function that emits custom stream events (stream_mode="custom")."""
    if not _core.in_node():
        return lambda _chunk: None
    return _core.emit


def get_store():
    """The long-term store of the running entrypoint, task or node (None without one)."""
    return getattr(_local, "store", None)


__all__ = ["get_config", "get_stream_writer", "get_store"]
