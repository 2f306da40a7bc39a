"""superstep.store's own tests (docs/python.md): the three stores through one API,
a Python embedding function (its exceptions come back as themselves), TTLs on a
manual clock, and PostgresStore on a throwaway PostgreSQL cluster
(tests/pg/cluster.sh; skipped with the reason when PostgreSQL is not installed)."""

import glob
import os
import subprocess
import uuid

import pytest

from superstep.store import InMemoryStore, PostgresStore, SqliteStore

CLUSTER = os.path.join(os.path.dirname(__file__), "..", "..", "tests", "pg", "cluster.sh")
# The server and psql run without the sanitizer runtime CTest preloads into Python.
ENV = {k: v for k, v in os.environ.items() if k not in ("LD_PRELOAD", "ASAN_OPTIONS")}


def _schema_url(url):
    """@p url with a new, empty schema as its search_path (one per store)."""
    schema = "s" + uuid.uuid4().hex[:12]
    psql = ([p for p in ["/usr/bin/psql"] if os.path.exists(p)]
            + sorted(glob.glob("/usr/lib/postgresql/*/bin/psql")))[0]
    subprocess.run([psql, url, "-qc", f"CREATE SCHEMA {schema}"], check=True, env=ENV)
    return f"{url}?options=-csearch_path%3D{schema}"


@pytest.fixture(scope="module")
def pg_url(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pg"))
    r = subprocess.run(["sh", CLUSTER, "start", d], capture_output=True, text=True, env=ENV)
    assert r.returncode == 0, r.stderr
    url_file = os.path.join(d, "url")
    if not os.path.exists(url_file):
        pytest.skip(f"PostgreSQL is not installed: {r.stdout.strip()}")
    with open(url_file) as f:
        url = f.read().strip()
    try:
        yield url
    finally:
        subprocess.run(["sh", CLUSTER, "stop", d], capture_output=True, env=ENV)


def embed(texts):
    """How often each of four letters appears (docs/store.md's toy embedding)."""
    return [[t.count(c) + 0.1 for c in "aeou"] for t in texts]


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def make_store(request, tmp_path):
    made = []

    def make(**kw):
        if request.param == "memory":
            s = InMemoryStore(**kw)
        elif request.param == "sqlite":
            s = SqliteStore(str(tmp_path / f"s{len(made)}.db"), **kw)
        else:
            s = PostgresStore(_schema_url(request.getfixturevalue("pg_url")), **kw)
        made.append(s)
        return s

    yield make
    for s in made:
        s.close()


def test_put_get_search_delete_list(make_store):
    s = make_store()
    s.put(("users", "ada"), "prefs", {"lang": "en", "n": 1})
    s.put(("users", "bob"), "prefs", {"lang": "fr", "n": 2})
    s.put(("docs",), "d1", {"text": "x"})
    item = s.get(("users", "ada"), "prefs")
    assert item.value == {"lang": "en", "n": 1} and item.namespace == ("users", "ada")
    assert item.created_at <= item.updated_at
    assert [i.key for i in s.search(("users",), filter={"lang": "fr"})] == ["prefs"]
    assert [i.namespace for i in s.search(("users",), filter={"n": {"$gte": 1}})] == [
        ("users", "bob"), ("users", "ada")]  # newest first
    assert s.list_namespaces(prefix=("users",)) == [("users", "ada"), ("users", "bob")]
    assert s.list_namespaces(max_depth=1) == [("docs",), ("users",)]
    s.delete(("users", "ada"), "prefs")
    assert s.get(("users", "ada"), "prefs") is None
    with pytest.raises(TypeError, match="store value"):
        s.put(("x",), "k", {"bad": {1, 2}})
    with pytest.raises(ValueError, match="filter"):
        s.search(("x",), filter={"a": {"$bogus": 1}})


def test_semantic_search_with_a_python_embedding_function(make_store):
    s = make_store(index={"dims": 4, "embed": embed, "fields": ["text"]})
    s.put(("notes",), "1", {"text": "banana bandana"})
    s.put(("notes",), "2", {"text": "good food"})
    s.put(("notes",), "3", {"text": "queue rule"})
    s.put(("notes",), "4", {"text": "ooooo"}, index=False)
    found = s.search(("notes",), query="cocoa", limit=3)
    assert [(i.key, round(i.score, 2)) for i in found] == [("2", 0.9), ("1", 0.48), ("3", 0.09)]
    last = s.search(("notes",), query="cocoa", filter={"text": "ooooo"})
    assert [(i.key, i.score) for i in last] == [("4", None)]

    boom = KeyError("no vectors today")

    def bad(texts):
        raise boom

    s2 = make_store(index={"dims": 2, "embed": bad})
    with pytest.raises(KeyError) as info:
        s2.put(("n",), "k", {"text": "x"})
    assert info.value is boom
    s3 = make_store(index={"dims": 3, "embed": lambda texts: [[1.0] for _ in texts]})
    with pytest.raises(ValueError, match="vector 0 has 1 numbers"):
        s3.put(("n",), "k", {"text": "x"})
    assert s3.get(("n",), "k") is None


def test_ttl_on_a_manual_clock(make_store):
    s = make_store(ttl={"default_ttl": 1, "refresh_on_read": True}, manual_clock=True)
    s.put(("c",), "short", {"v": 1})
    s.put(("c",), "hour", {"v": 2}, ttl=60)
    s.put(("c",), "forever", {"v": 3}, ttl=None)
    s.advance_clock(45)
    assert s.get(("c",), "short") is not None  # refreshes it: one more minute
    s.advance_clock(45)
    assert s.sweep_ttl() == 0
    s.advance_clock(30)
    assert s.sweep_ttl() == 1
    assert sorted(i.key for i in s.search(("c",))) == ["forever", "hour"]
    with pytest.raises(ValueError, match="manual_clock"):
        make_store().advance_clock(1)


def test_two_postgres_stores_share_items(pg_url):
    url = _schema_url(pg_url)
    with PostgresStore.from_conn_string(url) as a, PostgresStore.from_conn_string(url) as b:
        a.put(("team",), "k", {"v": 1})
        assert b.get(("team",), "k").value == {"v": 1}
        b.delete(("team",), "k")
        assert a.get(("team",), "k") is None
