"""Task caches with LangGraph's names (langgraph.cache): InMemoryCache, SqliteCache.

A cache given to `entrypoint(cache=...)` lets a task with a `cache_policy`
return the result stored for the same input, in any thread, without running
(sst_cache; docs/policies.md).
"""

from __future__ import annotations

import weakref

from . import _core


class BaseCache:
    """A task cache held by the engine (sst_cache)."""

    def __init__(self, path: "str | None" = None) -> None:
        self._cache = _core.Cache(path)
        self._graphs: "weakref.WeakSet" = weakref.WeakSet()  # graphs using it (clear_cache)

    def clear(self, namespaces: object = None) -> None:
        """Drops every entry."""
        self._cache.clear()


class InMemoryCache(BaseCache):
    """Entries in memory, lost with the process."""

    def __init__(self) -> None:
        super().__init__(None)


class SqliteCache(BaseCache):
    """Entries in a SQLite file."""

    def __init__(self, path: str) -> None:
        super().__init__(str(path))
        self.path = str(path)


__all__ = ["BaseCache", "InMemoryCache", "SqliteCache"]
