"""Checkpointers with LangGraph's names, over superstep's savers (one storage
format: a SQLite file written here is read by `superstep state/history`)."""

from __future__ import annotations

import asyncio
import contextlib
import datetime
from typing import AsyncIterator, Iterator, NamedTuple, Optional

from . import _core


class CheckpointTuple(NamedTuple):
    """A stored checkpoint as LangGraph's checkpointers list it. `checkpoint` holds its
    "id" and "ts" (ISO 8601); the state is read through the graph (get_state), as the
    engine's records keep it in their own form (snapshots or deltas)."""

    config: dict
    checkpoint: dict
    metadata: dict
    parent_config: Optional[dict] = None
    pending_writes: Optional[list] = None


def _tuple(r: dict) -> CheckpointTuple:
    def cfg(cid: str) -> dict:
        return {"configurable": {"thread_id": r["thread_id"],
                                 "checkpoint_ns": r["checkpoint_ns"], "checkpoint_id": cid}}

    ts = datetime.datetime.fromtimestamp(r["created_at"] / 1000, datetime.timezone.utc)
    return CheckpointTuple(
        config=cfg(r["checkpoint_id"]),
        checkpoint={"id": r["checkpoint_id"], "ts": ts.isoformat()},
        metadata=r["metadata"],
        parent_config=cfg(r["parent_id"]) if r["parent_id"] else None,
        pending_writes=[],
    )


class BaseCheckpointSaver(_core.Saver):
    """A superstep checkpointer (the engine's saver, held by Python), with LangGraph's
    reading methods: list, get_tuple, get."""

    def list(self, config: Optional[dict], *, filter: Optional[dict] = None,
             before: Optional[dict] = None, limit: Optional[int] = None
             ) -> Iterator[CheckpointTuple]:
        """The checkpoints of config's thread (every thread for None), newest first; all
        namespaces unless config names one (checkpoint_ns), as LangGraph's savers."""
        conf = (config or {}).get("configurable") or {}
        bid = ((before or {}).get("configurable") or {}).get("checkpoint_id")
        tid = conf.get("thread_id")
        threads = [str(tid)] if tid is not None else [t["thread_id"] for t in self.threads()]
        left = limit
        for t in threads:
            rows = self.records(t, conf.get("checkpoint_ns"), filter, bid, left or 0)
            cid = conf.get("checkpoint_id")
            for r in rows:
                if cid is not None and r["checkpoint_id"] != cid:
                    continue
                yield _tuple(r)
                if left is not None:
                    left -= 1
                    if left <= 0:
                        return

    def get_tuple(self, config: dict) -> Optional[CheckpointTuple]:
        """The checkpoint config names (its checkpoint_id, else the thread's latest in its
        checkpoint_ns, "" by default), or None."""
        conf = (config or {}).get("configurable") or {}
        tid = conf.get("thread_id")
        if tid is None:
            return None
        ns = conf.get("checkpoint_ns", "")
        cid = conf.get("checkpoint_id")
        for r in self.records(str(tid), ns, None, None, 0 if cid else 1):
            if cid is None or r["checkpoint_id"] == cid:
                return _tuple(r)
        return None

    def get(self, config: dict) -> Optional[dict]:
        t = self.get_tuple(config)
        return t.checkpoint if t is not None else None

    # LangGraph's async reading methods: the same reads, on a thread (off the caller's loop).

    async def aget_tuple(self, config: dict) -> Optional[CheckpointTuple]:
        return await asyncio.to_thread(self.get_tuple, config)

    async def aget(self, config: dict) -> Optional[dict]:
        return await asyncio.to_thread(self.get, config)

    async def alist(self, config: Optional[dict], *, filter: Optional[dict] = None,
                    before: Optional[dict] = None, limit: Optional[int] = None
                    ) -> AsyncIterator[CheckpointTuple]:
        items = await asyncio.to_thread(
            lambda: list(self.list(config, filter=filter, before=before, limit=limit))
        )
        for item in items:
            yield item

    async def adelete_thread(self, thread_id: str) -> None:
        await asyncio.to_thread(self.delete_thread, str(thread_id))


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


__all__ = ["BaseCheckpointSaver", "CheckpointTuple", "InMemorySaver", "MemorySaver", "SqliteSaver"]
