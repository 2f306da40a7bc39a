"""JSON schemas of type hints: get_input_jsonschema, get_output_jsonschema and
get_context_jsonschema of compiled graphs and entrypoints (LangGraph's), and the
parameters of Python functions made tools (superstep.tools)."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Mapping, Sequence
from typing import Any

_SIMPLE = {int: "integer", float: "number", str: "string", bool: "boolean",
           type(None): "null"}
_WRAPPERS = {getattr(typing, n) for n in ("Required", "NotRequired", "ReadOnly")
             if hasattr(typing, n)}


def _strip(hint: Any) -> Any:
    """The type under Annotated[...], Required[...] and NotRequired[...]."""
    while True:
        origin = typing.get_origin(hint)
        if origin is typing.Annotated or origin in _WRAPPERS:
            hint = typing.get_args(hint)[0]
        else:
            return hint


def _title(name: str) -> str:
    return name.replace("_", " ").title()


def _hints(cls: Any) -> dict:
    try:
        return typing.get_type_hints(cls, include_extras=True)
    except Exception:
        return dict(getattr(cls, "__annotations__", {}))


def _is_optional(hint: Any) -> bool:
    hint = _strip(hint)
    return hint is None or hint is type(None) or (
        typing.get_origin(hint) in (typing.Union, getattr(__import__("types"), "UnionType", None))
        and type(None) in typing.get_args(hint)
    )


def _object(props: dict, required: list, title: str) -> dict:
    out: dict = {"properties": props}
    if required:
        out["required"] = required
    out["title"] = title
    out["type"] = "object"
    return out


def schema_of(hint: Any) -> dict:
    """The JSON schema of a type hint (TypedDict, dataclass, pydantic model, list[...],
    Optional[...], Literal[...], the scalar types); {} for what it cannot describe."""
    hint = _strip(hint)
    if hint is Any or hint is inspect.Parameter.empty or hint is None:
        return {}
    origin = typing.get_origin(hint)
    args = typing.get_args(hint)
    if hint in _SIMPLE:
        return {"type": _SIMPLE[hint]}
    if origin is typing.Literal:
        return {"enum": list(args)}
    if origin in (list, set, frozenset, Sequence, typing.List) or hint in (list, set):
        return {"type": "array", "items": schema_of(args[0])} if args else {"type": "array"}
    if origin is tuple:
        return {"type": "array", "maxItems": len(args), "minItems": len(args),
                "prefixItems": [schema_of(a) for a in args]}
    if origin in (dict, Mapping) or hint is dict:
        if len(args) == 2 and schema_of(args[1]):
            return {"type": "object", "additionalProperties": schema_of(args[1])}
        return {"type": "object"}
    if origin is typing.Union or type(hint).__name__ == "UnionType":
        return {"anyOf": [schema_of(a) for a in args]}
    if isinstance(hint, type):
        return class_schema(hint) or {}
    return {}


def class_schema(cls: Any, title: str | None = None) -> dict | None:
    """The object schema of a TypedDict, a dataclass or a pydantic model (None for other
    classes): each field's schema with its title, and the required ones."""
    title = title or getattr(cls, "__name__", "State")
    if isinstance(cls, type) and typing.is_typeddict(cls):
        hints = _hints(cls)
        props = {k: {"title": _title(k), **schema_of(v)} for k, v in hints.items()}
        keys = getattr(cls, "__required_keys__", hints)
        return _object(props, [k for k in hints if k in keys], title)
    if dataclasses.is_dataclass(cls) and isinstance(cls, type):
        hints = _hints(cls)
        props, required = {}, []
        for f in dataclasses.fields(cls):
            hint = hints.get(f.name, Any)
            props[f.name] = {"title": _title(f.name), **schema_of(hint)}
            no_default = (f.default is dataclasses.MISSING
                          and f.default_factory is dataclasses.MISSING)  # type: ignore[misc]
            # No default (or `...`, pydantic's "required") and not Optional: required.
            if (no_default and not _is_optional(hint)) or f.default is Ellipsis:
                required.append(f.name)
        return _object(props, required, title)
    if hasattr(cls, "model_json_schema"):
        return cls.model_json_schema()
    if hasattr(cls, "schema") and hasattr(cls, "__fields__"):
        return cls.schema()
    return None


def titled(schema: dict, title: str) -> dict:
    if "title" in schema and schema.get("type") == "object":
        return schema
    return {**schema, "title": title}
