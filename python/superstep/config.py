"""Inside a node: the run's config and the custom stream writer."""

from __future__ import annotations

import threading
from typing import Any

from . import _aio, _core

_local = threading.local()


def get_config() -> dict:
    """The config of the running node's invoke."""
    home = _aio.home()  # in a coroutine node: its node's
    cfg = home.config if home is not None else getattr(_local, "config", None)
    if cfg is None:
        raise RuntimeError("Called get_config outside of a runnable context")
    return cfg


def get_stream_writer():
    """A function that emits custom stream events (stream_mode="custom")."""
    if _aio.home() is not None:
        return _aio.emit
    if not _core.in_node():
        return lambda _chunk: None
    return _core.emit


def get_store():
    """The long-term store of the running entrypoint, task or node (None without one)."""
    home = _aio.home()
    return home.store if home is not None else getattr(_local, "store", None)


__all__ = ["get_config", "get_stream_writer", "get_store"]
