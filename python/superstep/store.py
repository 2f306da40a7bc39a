"""Long-term stores with LangGraph's BaseStore API (langgraph.store), over
superstep's C stores (docs/store.md): InMemoryStore, SqliteStore, PostgresStore.

Values are JSON objects (dicts); namespaces are tuples of str. With
`index={"dims": n, "embed": ..., "fields": [...]}` the store embeds the texts
at `fields` of each value through the C store's embedding support and
`search(query=...)` ranks by cosine similarity; `embed` is a Python function
of a list of texts, an object with `embed_documents` (LangChain's
Embeddings), or an OpenAI-compatible "provider:model" name. With
`ttl={"default_ttl": minutes, "refresh_on_read": True,
"sweep_interval_minutes": m}` items expire (TTLConfig).
"""

from __future__ import annotations

import asyncio
import contextlib
from datetime import datetime
from typing import Any, Iterable, Iterator, List, Literal, NamedTuple, Optional, Tuple, Union

from . import _core

try:  # typing.TypedDict with total=False
    from typing import TypedDict
except ImportError:  # pragma: no cover
    TypedDict = dict  # type: ignore


class _NotProvided:
    def __repr__(self) -> str:
        return "NOT_PROVIDED"

    def __bool__(self) -> bool:
        return False


NOT_PROVIDED: Any = _NotProvided()
NamespacePath = Tuple[str, ...]


class InvalidNamespaceError(ValueError):
    """A namespace that is empty, has an empty label or a '.', or starts with 'langgraph'."""


class TTLConfig(TypedDict, total=False):
    refresh_on_read: bool
    default_ttl: Optional[float]
    sweep_interval_minutes: Optional[int]


class IndexConfig(TypedDict, total=False):
    dims: int
    embed: Any
    fields: Optional[List[str]]


class Embeddings:
    """LangChain's Embeddings interface: embed_documents and embed_query."""

    def embed_documents(self, texts: List[str]) -> List[List[float]]:
        raise NotImplementedError

    def embed_query(self, text: str) -> List[float]:
        return self.embed_documents([text])[0]

    async def aembed_documents(self, texts: List[str]) -> List[List[float]]:
        return self.embed_documents(texts)

    async def aembed_query(self, text: str) -> List[float]:
        return self.embed_query(text)


def _time(s: Any) -> Any:
    if isinstance(s, str):
        try:
            return datetime.fromisoformat(s.replace("Z", "+00:00"))
        except ValueError:
            return s
    return s


class Item:
    """A stored item: value, key, namespace and times (LangGraph's Item)."""

    __slots__ = ("value", "key", "namespace", "created_at", "updated_at")

    def __init__(self, *, value: dict, key: str, namespace: Tuple[str, ...],
                 created_at: Any, updated_at: Any) -> None:
        self.value = value
        self.key = key
        self.namespace = tuple(namespace)
        self.created_at = _time(created_at)
        self.updated_at = _time(updated_at)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Item):
            return False
        return (self.value == other.value and self.key == other.key
                and self.namespace == other.namespace and self.created_at == other.created_at
                and self.updated_at == other.updated_at)

    def __hash__(self) -> int:
        return hash((self.namespace, self.key))

    def dict(self) -> dict:
        return {
            "namespace": list(self.namespace),
            "key": self.key,
            "value": self.value,
            "created_at": self.created_at.isoformat() if isinstance(self.created_at, datetime)
            else self.created_at,
            "updated_at": self.updated_at.isoformat() if isinstance(self.updated_at, datetime)
            else self.updated_at,
        }

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(namespace={self.namespace!r}, key={self.key!r}, "
                f"value={self.value!r})")


class SearchItem(Item):
    """An item found by search, with its relevance score (None without a query)."""

    __slots__ = ("score",)

    def __init__(self, namespace: Tuple[str, ...], key: str, value: dict, created_at: Any,
                 updated_at: Any, score: Optional[float] = None) -> None:
        super().__init__(value=value, key=key, namespace=namespace, created_at=created_at,
                         updated_at=updated_at)
        self.score = score

    def __eq__(self, other: object) -> bool:
        return super().__eq__(other) and getattr(other, "score", None) == self.score

    __hash__ = Item.__hash__

    def dict(self) -> dict:
        d = super().dict()
        d["score"] = self.score
        return d


class GetOp(NamedTuple):
    namespace: Tuple[str, ...]
    key: str
    refresh_ttl: bool = True


class SearchOp(NamedTuple):
    namespace_prefix: Tuple[str, ...]
    filter: Optional[dict] = None
    limit: int = 10
    offset: int = 0
    query: Optional[str] = None
    refresh_ttl: bool = True


class MatchCondition(NamedTuple):
    match_type: Literal["prefix", "suffix"]
    path: Tuple[str, ...]


class ListNamespacesOp(NamedTuple):
    match_conditions: Optional[Tuple[MatchCondition, ...]] = None
    max_depth: Optional[int] = None
    limit: int = 100
    offset: int = 0


class PutOp(NamedTuple):
    namespace: Tuple[str, ...]
    key: str
    value: Optional[dict]
    index: Union[Literal[False], List[str], None] = None
    ttl: Optional[float] = None


Op = Union[GetOp, SearchOp, PutOp, ListNamespacesOp]
Result = Union[Item, List[Item], List[SearchItem], List[Tuple[str, ...]], None]


def _validate_namespace(namespace: Tuple[str, ...]) -> None:
    if not namespace:
        raise InvalidNamespaceError("Namespace cannot be empty.")
    for label in namespace:
        if not isinstance(label, str):
            raise InvalidNamespaceError(
                f"Namespace labels must be strings, but got {type(label).__name__}."
                f" Full namespace: {namespace}"
            )
        if "." in label:
            raise InvalidNamespaceError(
                f"Namespace labels cannot contain periods ('.'). Got {label}."
                f" Full namespace: {namespace}"
            )
        if not label:
            raise InvalidNamespaceError(
                f"Namespace labels cannot be empty strings. Got {label} in {namespace}"
            )
    if namespace[0] == "langgraph":
        raise InvalidNamespaceError(
            f'Root label for namespace cannot be "langgraph". Got: {namespace}'
        )


def _refresh(v: Optional[bool]) -> int:
    return -1 if v is None else (1 if v else 0)


def _embedder(embed: Any) -> Any:
    """A Python function of a list of texts for the C store's embedding hook."""
    if isinstance(embed, str):
        return _core_embedder(embed)
    if hasattr(embed, "embed_documents"):
        return embed.embed_documents
    if callable(embed):
        return embed
    raise TypeError(f"index: embed must be a function, an Embeddings or a name, got {embed!r}")


def _core_embedder(name: str) -> Any:
    raise NotImplementedError(
        f"index: embed={name!r}: provider names are not supported from Python yet; "
        "give a function of a list of texts"
    )


class BaseStore:
    """LangGraph's BaseStore over a superstep C store (`self._store`, a _core.Store)."""

    supports_ttl = True
    _store: Any

    def __init__(self, kind: str, target: Optional[str] = None, *,
                 index: Optional[IndexConfig] = None, ttl: Optional[TTLConfig] = None,
                 manual_clock: bool = False) -> None:
        index = dict(index or {})
        ttl = dict(ttl or {})
        unknown = set(index) - {"dims", "embed", "fields", "text_fields", "distance_type"}
        if unknown:
            raise ValueError(f"index: unknown keys {sorted(unknown)}")
        unknown = set(ttl) - {"default_ttl", "refresh_on_read", "sweep_interval_minutes",
                              "omit_expired"}
        if unknown:
            raise ValueError(f"ttl: unknown keys {sorted(unknown)}")
        dims = int(index.get("dims") or 0)
        if index and dims <= 0:
            raise ValueError("index: dims must be a positive int")
        fields = index.get("fields", index.get("text_fields"))
        self.index_config = index or None
        self.ttl_config = ttl or None
        self._store = _core.Store(
            kind, target, dims=dims, fields=list(fields) if fields else None,
            embed=_embedder(index["embed"]) if index else None,
            default_ttl=float(ttl.get("default_ttl") or 0.0),
            refresh_on_read=bool(ttl.get("refresh_on_read", True)),
            omit_expired=bool(ttl.get("omit_expired", False)),
            sweep_interval_minutes=float(ttl.get("sweep_interval_minutes") or 0.0),
            manual_clock=manual_clock,
        )

    # -- the batch interface --

    def batch(self, ops: Iterable[Op]) -> List[Result]:
        return [self._op(op) for op in ops]

    async def abatch(self, ops: Iterable[Op]) -> List[Result]:
        return await asyncio.to_thread(self.batch, list(ops))

    def _op(self, op: Op) -> Result:
        st = self._store
        if isinstance(op, GetOp):
            d = st.get(tuple(op.namespace), op.key, _refresh(op.refresh_ttl))
            return None if d is None else Item(**{**d, "namespace": tuple(d["namespace"])})
        if isinstance(op, SearchOp):
            items = st.search(tuple(op.namespace_prefix), query=op.query or None,
                              filter=op.filter, limit=op.limit, offset=op.offset,
                              refresh_ttl=_refresh(op.refresh_ttl))
            return [SearchItem(tuple(d["namespace"]), d["key"], d["value"], d["created_at"],
                               d["updated_at"], d.get("score")) for d in items]
        if isinstance(op, PutOp):
            if op.value is None:
                st.delete(tuple(op.namespace), op.key)
                return None
            ttl = op.ttl
            minutes = 0.0 if ttl is NOT_PROVIDED else (-1.0 if ttl is None else float(ttl))
            st.put(tuple(op.namespace), op.key, op.value, ttl=minutes, index=op.index)
            return None
        if isinstance(op, ListNamespacesOp):
            prefix = suffix = None
            for c in op.match_conditions or ():
                if c.match_type == "prefix":
                    prefix = tuple(c.path)
                elif c.match_type == "suffix":
                    suffix = tuple(c.path)
                else:
                    raise ValueError(f"Unsupported match type: {c.match_type!r}")
            out = st.list_namespaces(prefix=prefix, suffix=suffix,
                                     max_depth=op.max_depth or 0, limit=op.limit,
                                     offset=op.offset)
            return [tuple(ns) for ns in out]
        raise TypeError(f"Unknown store operation {op!r}")

    # -- the calls --

    def get(self, namespace: Tuple[str, ...], key: str, *,
            refresh_ttl: Optional[bool] = None) -> Optional[Item]:
        """The item at (namespace, key), or None."""
        d = self._store.get(tuple(namespace), key, _refresh(refresh_ttl))
        return None if d is None else Item(**{**d, "namespace": tuple(d["namespace"])})

    def search(self, namespace_prefix: Tuple[str, ...], /, *, query: Optional[str] = None,
               filter: Optional[dict] = None, limit: int = 10, offset: int = 0,
               refresh_ttl: Optional[bool] = None) -> List[SearchItem]:
        """Items under a namespace prefix, filtered, ranked by `query` with an index."""
        op = SearchOp(tuple(namespace_prefix), filter, limit, offset, query, refresh_ttl)
        return self._op(op)  # type: ignore[return-value]

    def put(self, namespace: Tuple[str, ...], key: str, value: dict,
            index: Union[Literal[False], List[str], None] = None, *,
            ttl: Union[Optional[float], _NotProvided] = NOT_PROVIDED) -> None:
        """Stores `value` at (namespace, key); `index=False` stores it without vectors."""
        _validate_namespace(tuple(namespace))
        if ttl not in (None, NOT_PROVIDED) and not self.supports_ttl:
            raise NotImplementedError(f"{type(self).__name__} does not support TTL")
        self._op(PutOp(tuple(namespace), str(key), value, index=index, ttl=ttl))

    def delete(self, namespace: Tuple[str, ...], key: str) -> None:
        self._store.delete(tuple(namespace), key)

    def list_namespaces(self, *, prefix: Optional[NamespacePath] = None,
                        suffix: Optional[NamespacePath] = None,
                        max_depth: Optional[int] = None, limit: int = 100,
                        offset: int = 0) -> List[Tuple[str, ...]]:
        conds = []
        if prefix:
            conds.append(MatchCondition("prefix", tuple(prefix)))
        if suffix:
            conds.append(MatchCondition("suffix", tuple(suffix)))
        return self._op(ListNamespacesOp(tuple(conds) or None, max_depth, limit, offset))  # type: ignore

    def sweep_ttl(self) -> int:
        """Deletes the expired items now; how many went."""
        return self._store.sweep_ttl()

    def advance_clock(self, seconds: float) -> None:
        """Moves a store opened with manual_clock=True forward (tests)."""
        self._store.advance_clock(seconds)

    def start_ttl_sweeper(self, sweep_interval_minutes: Optional[int] = None) -> Any:
        """The sweeper runs in the C store when ttl has sweep_interval_minutes."""
        fut: "asyncio.Future[None]" = None  # type: ignore[assignment]
        return fut

    def stop_ttl_sweeper(self, timeout: Optional[float] = None) -> bool:
        return True

    def setup(self) -> None:
        """Tables are made when the store opens (LangGraph's setup() is a no-op here)."""

    def close(self) -> None:
        self._store.close()

    async def aget(self, namespace: Tuple[str, ...], key: str, *,
                   refresh_ttl: Optional[bool] = None) -> Optional[Item]:
        return await asyncio.to_thread(self.get, namespace, key, refresh_ttl=refresh_ttl)

    async def asearch(self, namespace_prefix: Tuple[str, ...], /, **kwargs: Any) -> List[SearchItem]:
        return await asyncio.to_thread(lambda: self.search(namespace_prefix, **kwargs))

    async def aput(self, namespace: Tuple[str, ...], key: str, value: dict,
                   index: Union[Literal[False], List[str], None] = None, **kwargs: Any) -> None:
        _validate_namespace(tuple(namespace))
        await asyncio.to_thread(lambda: self.put(namespace, key, value, index, **kwargs))

    async def adelete(self, namespace: Tuple[str, ...], key: str) -> None:
        await asyncio.to_thread(self.delete, namespace, key)

    async def alist_namespaces(self, **kwargs: Any) -> List[Tuple[str, ...]]:
        return await asyncio.to_thread(lambda: self.list_namespaces(**kwargs))


class InMemoryStore(BaseStore):
    """Items in memory, lost with the process (LangGraph's InMemoryStore)."""

    def __init__(self, *, index: Optional[IndexConfig] = None,
                 ttl: Optional[TTLConfig] = None, manual_clock: bool = False) -> None:
        super().__init__("memory", None, index=index, ttl=ttl, manual_clock=manual_clock)


class SqliteStore(BaseStore):
    """Items in a SQLite file, beside SqliteSaver's tables if it is the same file."""

    def __init__(self, conn: Any = ":memory:", *, index: Optional[IndexConfig] = None,
                 ttl: Optional[TTLConfig] = None, manual_clock: bool = False) -> None:
        path = conn if isinstance(conn, str) else str(conn)
        self.path = path
        super().__init__("sqlite", path, index=index, ttl=ttl, manual_clock=manual_clock)

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, *, index: Optional[IndexConfig] = None,
                         ttl: Optional[TTLConfig] = None) -> Iterator["SqliteStore"]:
        store = cls(conn_string, index=index, ttl=ttl)
        try:
            yield store
        finally:
            store.close()


class PostgresStore(BaseStore):
    """Items in PostgreSQL, shared by every process on the database (docs/store.md)."""

    def __init__(self, conn: Optional[str] = None, *, index: Optional[IndexConfig] = None,
                 ttl: Optional[TTLConfig] = None, manual_clock: bool = False) -> None:
        super().__init__("postgres", conn, index=index, ttl=ttl, manual_clock=manual_clock)

    @classmethod
    @contextlib.contextmanager
    def from_conn_string(cls, conn_string: str, *, index: Optional[IndexConfig] = None,
                         ttl: Optional[TTLConfig] = None) -> Iterator["PostgresStore"]:
        store = cls(conn_string, index=index, ttl=ttl)
        try:
            yield store
        finally:
            store.close()


__all__ = [
    "BaseStore", "InMemoryStore", "SqliteStore", "PostgresStore", "Item", "SearchItem",
    "GetOp", "PutOp", "SearchOp", "ListNamespacesOp", "MatchCondition", "Op", "Result",
    "InvalidNamespaceError", "IndexConfig", "TTLConfig", "Embeddings", "NOT_PROVIDED",
]
