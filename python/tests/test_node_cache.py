"""The node cache of StateGraph (LangGraph's CachePolicy on nodes): add_node(cache_policy=),
set_node_defaults(cache_policy=), compile(cache=), clear_cache(), over the C engine's node
cache (sst_node_cache_policy, sst_compile_opts.cache). docs/python.md, "The node cache".

LangGraph's own node-cache test is ported in test_pregel.py
(test_in_one_fan_out_state_graph_waiting_edge_multiple, on both caches); these are the
binding's: key functions, TTLs reaching the cache, defaults, replayed gotos and Sends,
clearing, shared caches, bad arguments, and no growth over many cached runs.
"""

import asyncio
import gc
import operator
import sqlite3
import sys
from typing import Annotated, TypedDict

import pytest

from superstep.cache import InMemoryCache, SqliteCache
from superstep.graph import END, START, StateGraph
from superstep.types import CachePolicy, Command, RetryPolicy, Send


class State(TypedDict, total=False):
    q: str
    user: str
    out: Annotated[list, operator.add]


def _counting(calls, name, write=None):
    def node(state):
        calls.append(name)
        return {"out": [write(state) if write else f"{name}:{state.get('q')}"]}

    node.__name__ = name
    return node


def _chain(calls, policy=None, defaults=None):
    g = StateGraph(State)
    if defaults is not None:
        g.set_node_defaults(cache_policy=defaults)
    g.add_node("a", _counting(calls, "a"), cache_policy=policy)
    g.add_node("b", _counting(calls, "b"))
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    return g


def test_same_input_replays_the_cached_writes(cache):
    calls = []
    app = _chain(calls, CachePolicy()).compile(cache=cache)
    assert app.invoke({"q": "x"}) == {"q": "x", "out": ["a:x", "b:x"]}
    assert list(app.stream({"q": "x"})) == [
        {"a": {"out": ["a:x"]}, "__metadata__": {"cached": True}},
        {"b": {"out": ["b:x"]}},
    ]
    assert calls == ["a", "b", "b"]
    # another input is another key
    assert app.invoke({"q": "y"})["out"] == ["a:y", "b:y"]
    assert calls == ["a", "b", "b", "a", "b"]


def test_without_a_cache_the_policy_does_nothing():
    calls = []
    app = _chain(calls, CachePolicy()).compile()
    app.invoke({"q": "x"})
    assert list(app.stream({"q": "x"})) == [{"a": {"out": ["a:x"]}}, {"b": {"out": ["b:x"]}}]
    assert calls == ["a", "b", "a", "b"]
    with pytest.raises(ValueError, match="No cache is set"):
        app.clear_cache()


def test_key_func_picks_what_is_cached(cache):
    seen = []

    def key(state):
        seen.append(dict(state))
        return state["user"]

    calls = []
    app = _chain(calls, CachePolicy(key_func=key)).compile(cache=cache)
    app.invoke({"q": "x", "user": "u1"})
    # same user, another question: the key is the user's, so `a` is not run again
    out = app.invoke({"q": "other", "user": "u1"})
    assert out["out"] == ["a:x", "b:other"]
    assert calls == ["a", "b", "b"]
    assert seen[0] == {"q": "x", "user": "u1", "out": []}
    # bytes keys work too (as hex)
    calls.clear()
    app2 = _chain(calls, CachePolicy(key_func=lambda s: s["user"].encode())).compile(
        cache=InMemoryCache())
    app2.invoke({"q": "x", "user": "u1"})
    app2.invoke({"q": "y", "user": "u1"})
    assert calls == ["a", "b", "b"]


def test_a_failing_key_func_runs_the_node_uncached(cache):
    def key(state):
        raise RuntimeError("no key")

    calls = []
    app = _chain(calls, CachePolicy(key_func=key)).compile(cache=cache)
    app.invoke({"q": "x"})
    app.invoke({"q": "x"})
    assert calls == ["a", "b", "a", "b"]
    calls.clear()
    app = _chain(calls, CachePolicy(key_func=lambda s: 42)).compile(cache=InMemoryCache())
    app.invoke({"q": "x"})
    app.invoke({"q": "x"})
    assert calls == ["a", "b", "a", "b"]


def test_ttl_reaches_the_cache(tmp_path):
    path = tmp_path / "cache.db"
    g = StateGraph(State)
    g.add_node("a", _counting([], "a"), cache_policy=CachePolicy(ttl=120))
    g.add_node("b", _counting([], "b"), cache_policy=CachePolicy())
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(cache=SqliteCache(str(path)))
    app.invoke({"q": "x"})
    with sqlite3.connect(str(path)) as db:
        rows = db.execute("SELECT ns, expires FROM sst_cache ORDER BY ns").fetchall()
    assert [ns.rsplit("|", 1)[1] for ns, _ in rows] == ["a", "b"]
    assert rows[0][1] is not None and rows[1][1] is None


def test_bad_policies_and_caches_are_refused():
    g = StateGraph(State)
    with pytest.raises(ValueError, match="ttl"):
        g.add_node("a", lambda s: None, cache_policy=CachePolicy(ttl=-1))
    with pytest.raises(TypeError, match="key_func"):
        g.add_node("a", lambda s: None, cache_policy=CachePolicy(key_func="nope"))
    with pytest.raises(TypeError, match="CachePolicy"):
        g.add_node("a", lambda s: None, cache_policy={"ttl": 1})
    with pytest.raises(TypeError, match="CachePolicy"):
        g.set_node_defaults(cache_policy=60)
    g.add_node("a", lambda s: None)
    g.add_edge(START, "a")
    with pytest.raises(TypeError, match="Invalid cache"):
        g.compile(cache=object())


def test_node_defaults_cache_every_node_but_error_handlers(cache):
    calls = []

    def boom(state):
        calls.append("boom")
        raise ValueError("boom")

    def handler(state, error):
        calls.append("handler")
        return {"out": ["handled"]}

    g = StateGraph(State)
    g.set_node_defaults(cache_policy=CachePolicy(), error_handler=handler)
    g.add_node("a", _counting(calls, "a"))
    g.add_node("own", _counting(calls, "own"),
               cache_policy=CachePolicy(key_func=lambda s: "same"))
    g.add_node("boom", boom)
    g.add_edge(START, "a")
    g.add_edge("a", "own")
    g.add_edge("own", "boom")
    app = g.compile(cache=cache)
    assert app.invoke({"q": "x"})["out"] == ["a:x", "own:x", "handled"]
    assert app.invoke({"q": "x"})["out"] == ["a:x", "own:x", "handled"]
    # a and own cached; boom failed (nothing cached), its handler is never cached
    assert calls == ["a", "own", "boom", "handler", "boom", "handler"]
    # own's key ignores the input: cached for q=y too, a is not
    calls.clear()
    assert app.invoke({"q": "y"})["out"] == ["a:y", "own:x", "handled"]
    assert calls == ["a", "boom", "handler"]


def test_clear_cache_of_some_nodes(cache):
    calls = []
    g = _chain(calls, defaults=CachePolicy())
    app = g.compile(cache=cache)
    app.invoke({"q": "x"})
    app.invoke({"q": "x"})
    assert calls == ["a", "b"]
    app.clear_cache(["b", "no-such-node"])
    app.invoke({"q": "x"})
    assert calls == ["a", "b", "b"]
    app.clear_cache(["no-such-node"])  # nothing to clear: nothing cleared
    app.invoke({"q": "x"})
    assert calls == ["a", "b", "b"]
    asyncio.run(app.aclear_cache())
    app.invoke({"q": "x"})
    assert calls == ["a", "b", "b", "a", "b"]


def test_cached_gotos_and_sends_are_replayed(cache):
    calls = []

    def route(state):
        calls.append("route")
        return Command(update={"out": ["route"]},
                       goto=[Send("worker", {"q": "w1"}), Send("worker", {"q": "w2"}), "done"])

    def worker(arg):
        calls.append("worker:" + arg["q"])
        return {"out": [arg["q"]]}

    g = StateGraph(State)
    g.add_node("route", route, cache_policy=CachePolicy(), destinations=("worker", "done"))
    g.add_node("worker", worker, cache_policy=CachePolicy())
    g.add_node("done", _counting(calls, "done"))
    g.add_edge(START, "route")
    app = g.compile(cache=cache)
    first = app.invoke({"q": "x"})
    assert first["out"] == ["route", "done:x", "w1", "w2"]
    assert sorted(calls) == ["done", "route", "worker:w1", "worker:w2"]
    assert app.invoke({"q": "x"}) == first  # only `done` runs again
    assert sorted(calls) == ["done", "done", "route", "worker:w1", "worker:w2"]
    chunks = list(app.stream({"q": "x"}))
    assert chunks[0] == {"route": {"out": ["route"]}, "__metadata__": {"cached": True}}
    assert {"worker": {"out": ["w1"]}, "__metadata__": {"cached": True}} in chunks


def test_graphs_sharing_a_cache():
    cache = InMemoryCache()
    calls = []
    builder = _chain(calls, defaults=CachePolicy())
    builder.compile(cache=cache).invoke({"q": "x"})
    # the same nodes compiled again share the entries, as LangGraph keys them by function
    builder.compile(cache=cache).invoke({"q": "x"})
    assert calls == ["a", "b"]
    # other functions under the same node names do not
    g = StateGraph(State)
    g.set_node_defaults(cache_policy=CachePolicy())
    g.add_node("a", lambda s: {"out": ["other a"]})
    g.add_node("b", lambda s: {"out": ["other b"]})
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    assert g.compile(cache=cache).invoke({"q": "x"})["out"] == ["other a", "other b"]


def test_a_checkpointed_graph_with_a_cache(sync_checkpointer, cache):
    calls = []
    app = _chain(calls, CachePolicy()).compile(checkpointer=sync_checkpointer, cache=cache)
    app.invoke({"q": "x"}, {"configurable": {"thread_id": "1"}})
    out = app.invoke({"q": "x"}, {"configurable": {"thread_id": "2"}})
    assert out == {"q": "x", "out": ["a:x", "b:x"]}
    assert calls == ["a", "b", "b"]
    assert app.get_state({"configurable": {"thread_id": "2"}}).values == out


def test_retried_node_caches_its_success(cache):
    calls = []

    def flaky(state):
        calls.append("flaky")
        if len(calls) == 1:
            raise ConnectionError("once")
        return {"out": ["ok"]}

    g = StateGraph(State)
    g.add_node("flaky", flaky, cache_policy=CachePolicy(),
               retry_policy=RetryPolicy(initial_interval=0, jitter=False))
    g.add_edge(START, "flaky")
    app = g.compile(cache=cache)
    assert app.invoke({"q": "x"})["out"] == ["ok"]
    assert app.invoke({"q": "x"})["out"] == ["ok"]
    assert calls == ["flaky", "flaky"]


def _counts():
    gc.collect()
    return len(gc.get_objects()), sys.getallocatedblocks()


def test_no_growth_over_cached_runs():
    runs = {"a": 0, "b": 0}

    def a(state):
        runs["a"] += 1
        return {"out": ["a"]}

    def b(state):
        runs["b"] += 1
        return Command(update={"out": ["b"]}, goto=END)

    g = StateGraph(State)
    g.add_node("a", a, cache_policy=CachePolicy(key_func=lambda s: s["q"]))
    g.add_node("b", b, cache_policy=CachePolicy())
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    app = g.compile(cache=InMemoryCache())
    for i in range(200):
        app.invoke({"q": str(i % 10)})
        list(app.stream({"q": str(i % 10)}))
    objects0, blocks0 = _counts()
    for i in range(2000):
        app.invoke({"q": str(i % 10)})
        list(app.stream({"q": str(i % 10)}))
    objects1, blocks1 = _counts()
    assert runs == {"a": 10, "b": 10}
    assert objects1 - objects0 < 100, (objects0, objects1)
    assert blocks1 - blocks0 < 1000, (blocks0, blocks1)


def test_a_subgraph_node_is_cached(cache):
    calls = []
    sub = StateGraph(State)
    sub.add_node("inner", _counting(calls, "inner"))
    sub.add_edge(START, "inner")
    g = StateGraph(State)
    g.add_node("sub", sub.compile(), cache_policy=CachePolicy())
    g.add_edge(START, "sub")
    app = g.compile(cache=cache)
    first = app.invoke({"q": "x"})
    assert first["out"] == ["inner:x"]
    chunks = list(app.stream({"q": "x"}))
    assert len(chunks) == 1 and chunks[0]["__metadata__"] == {"cached": True}
    assert chunks[0]["sub"]["out"] == ["inner:x"]
    assert calls == ["inner"]
