"""Checkpointers with LangGraph's names, over superstep's savers (one storage
format: a SQLite file written here is read by `superstep state/history`)."""

from __future__ import annotations

import contextlib
from typing import Iterator

from . import _core


class BaseCheckpointSaver(_core.Saver):
    """A superstep checkpointer (the engine's saver, held by Python)."""


class InMemorySaver(BaseCheckpointSaver):
    """Every checkpoint in memory, lost with the process."""

    def __init__(self) -> None:
        super().__init__("memory")


MemorySaver = InMemorySaver


class SqliteSaver(BaseCheckpointSaver):
    """Checkpoints in a SQLite file (superstep's format, WAL)."""

    def __init__(self, path: str) -> None:
        super().__init__("sqlite", str(path))
        self.path = str(path)

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str) -> Iterator["SqliteSaver"]:
        saver = cls(conn_string)
        try:
            yield saver
        finally:
            saver.close()


__all__ = ["BaseCheckpointSaver", "InMemorySaver", "MemorySaver", "SqliteSaver"]
