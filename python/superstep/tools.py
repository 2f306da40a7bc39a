"""Python functions as tools, as LangChain's `@tool` makes them (langchain_core.tools).

`@tool` reads a function's signature and docstring: the tool's name is the
function's, its description the docstring, its arguments' JSON schema comes
from the type hints (superstep._schema) and, with `parse_docstring=True`, each
argument's description from a Google-style "Args:" section. Arguments typed
`Annotated[T, InjectedState]`, `InjectedStore()` or `InjectedToolCallId` are
left out of the schema and filled by ToolNode (superstep.prebuilt).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
import typing
from typing import Any, Callable, Dict, List, Optional, Union

from ._schema import schema_of
from .messages import ToolMessage


class ToolException(Exception):
    """An error a tool raises for the model to read (LangChain's ToolException)."""


class InjectedToolArg:
    """An argument the caller fills, never the model (kept out of the schema)."""


class InjectedToolCallId(InjectedToolArg):
    """Annotated[str, InjectedToolCallId]: the id of the tool call being answered."""


class InjectedState(InjectedToolArg):
    """Annotated[dict, InjectedState]: the graph's state (or InjectedState("field"): one
    field of it, None when absent), given by ToolNode."""

    def __init__(self, field: Optional[str] = None) -> None:
        self.field = field


class InjectedStore(InjectedToolArg):
    """Annotated[BaseStore, InjectedStore()]: the graph's store, given by ToolNode."""


def _injected(hint: Any) -> Optional[Any]:
    """The InjectedToolArg marker (class or instance) of an Annotated hint, else None."""
    while True:
        if typing.get_origin(hint) is typing.Annotated:
            for meta in typing.get_args(hint)[1:]:
                if isinstance(meta, InjectedToolArg) or (
                    isinstance(meta, type) and issubclass(meta, InjectedToolArg)
                ):
                    return meta
            hint = typing.get_args(hint)[0]
        elif typing.get_origin(hint) is Union:  # Optional[Annotated[...]]
            inner = [a for a in typing.get_args(hint) if a is not type(None)]
            if len(inner) != 1:
                return None
            hint = inner[0]
        else:
            return None


_ARGS_HEADER = re.compile(r"^\s*(Args|Arguments|Parameters)\s*:\s*$")
_SECTION = re.compile(r"^\s*(Returns|Raises|Yields|Examples?|Notes?)\s*:\s*$")


def _parse_docstring(doc: str) -> tuple:
    """(summary, {arg: description}) of a Google-style docstring."""
    lines = inspect.cleandoc(doc).splitlines()
    summary: List[str] = []
    args: Dict[str, str] = {}
    i = 0
    while i < len(lines) and not _ARGS_HEADER.match(lines[i]):
        if _SECTION.match(lines[i]):
            break
        summary.append(lines[i])
        i += 1
    if i < len(lines) and _ARGS_HEADER.match(lines[i]):
        i += 1
        current = None
        while i < len(lines) and not _SECTION.match(lines[i]):
            line = lines[i]
            m = re.match(r"^\s+(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
            if m:
                current = m.group(1).lstrip("*")
                args[current] = m.group(3).strip()
            elif current is not None and line.strip():
                args[current] = (args[current] + " " + line.strip()).strip()
            i += 1
    return "\n".join(summary).strip(), args


class BaseTool:
    """A tool: `name`, `description`, `args_schema` (a JSON schema of its arguments),
    `invoke(args or tool call)`."""

    name: str = ""
    description: str = ""
    return_direct: bool = False

    def __init__(self, name: str, description: str, func: Callable,
                 parameters: dict, injected: Dict[str, Any],
                 handle_tool_error: Any = False) -> None:
        self.name = name
        self.description = description
        self.func = func
        self.args_schema = parameters
        self.injected = injected  # argument name -> its InjectedToolArg marker
        self.handle_tool_error = handle_tool_error

    def __repr__(self) -> str:
        return f"{type(self).__name__}(name={self.name!r})"

    @property
    def args(self) -> dict:
        return dict(self.args_schema.get("properties", {}))

    @property
    def tool_call_schema(self) -> dict:
        """The tool as chat completions lists it (OpenAI's function tool)."""
        return {"type": "function", "function": {
            "name": self.name, "description": self.description, "parameters": self.args_schema}}

    def _run(self, args: dict, injected: Optional[dict] = None) -> Any:
        kwargs = dict(args)
        if injected:
            kwargs.update(injected)
        out = self.func(**kwargs)
        if inspect.iscoroutine(out):  # an async def tool, run to its end here
            out = asyncio.run(out)
        return out

    def validate(self, args: Any) -> List[str]:
        """What is wrong with `args` against the tool's schema (missing, unknown or mistyped
        arguments); [] when nothing is."""
        if not isinstance(args, dict):
            return [f"arguments must be an object, got {type(args).__name__}"]
        props = self.args_schema.get("properties", {})
        errors = [f"{k}: Field required" for k in self.args_schema.get("required", [])
                  if k not in args]
        errors += [f"{k}: Extra inputs are not permitted" for k in args if k not in props]
        for k, v in args.items():
            want = props.get(k, {}).get("type")
            if want is not None and not _is_type(v, want):
                errors.append(f"{k}: Input should be a valid {want}")
        return errors

    def invoke(self, input: Union[str, dict], config: Any = None, **kwargs: Any) -> Any:
        """Runs the tool: with its arguments (a dict; a string for a one-argument tool) the
        result; with a tool call ({"name", "args", "id", "type": "tool_call"}) a ToolMessage
        answering it."""
        call_id = None
        if isinstance(input, dict) and input.get("type") == "tool_call":
            call_id = input.get("id")
            args = dict(input.get("args") or {})
        elif isinstance(input, str):
            props = list(self.args_schema.get("properties", {}))
            if len(props) != 1:
                raise ValueError(f"tool {self.name!r} takes {len(props)} arguments, not a string")
            args = {props[0]: input}
        else:
            args = dict(input)
        injected = {}
        for arg, marker in self.injected.items():
            if arg in args:
                continue
            if call_id is not None and (marker is InjectedToolCallId
                                        or isinstance(marker, InjectedToolCallId)):
                injected[arg] = call_id
        try:
            out = self._run(args, injected)
        except ToolException as e:
            if not self.handle_tool_error:
                raise
            out = (self.handle_tool_error if isinstance(self.handle_tool_error, str)
                   else self.handle_tool_error(e) if callable(self.handle_tool_error)
                   else str(e))
        if call_id is None or isinstance(out, ToolMessage):
            return out
        return ToolMessage(_content(out), tool_call_id=call_id, name=self.name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.func(*args, **kwargs)


StructuredTool = BaseTool

_JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
               "array": (list, tuple), "object": (dict,), "null": (type(None),)}


def _is_type(v: Any, want: str) -> bool:
    if want in ("integer", "number") and isinstance(v, bool):
        return False
    return isinstance(v, _JSON_TYPES.get(want, (object,)))


def _content(out: Any) -> Any:
    """A tool's result as a tool message's content: a string, else JSON."""
    if isinstance(out, str):
        return out
    if isinstance(out, list) and all(isinstance(x, dict) and "type" in x for x in out):
        return out  # content blocks
    try:
        return json.dumps(out, ensure_ascii=False)
    except (TypeError, ValueError):
        return str(out)


def _make(func: Callable, name: Optional[str], description: Optional[str],
          parse_docstring: bool, return_direct: bool,
          handle_tool_error: Any) -> BaseTool:
    doc = inspect.getdoc(func) or ""
    summary, arg_docs = _parse_docstring(doc) if parse_docstring else (doc, {})
    desc = description if description is not None else summary
    if not desc:
        raise ValueError(
            f"Function {func.__name__} must have a docstring if description not provided."
        )
    try:
        hints = typing.get_type_hints(func, include_extras=True)
    except Exception:
        hints = dict(getattr(func, "__annotations__", {}))
    props: Dict[str, Any] = {}
    required: List[str] = []
    injected: Dict[str, Any] = {}
    for p in inspect.signature(func).parameters.values():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD) or p.name in ("self", "cls"):
            continue
        hint = hints.get(p.name, Any)
        marker = _injected(hint)
        if marker is not None:
            injected[p.name] = marker
            continue
        if p.name in ("config", "run_manager", "callbacks"):
            continue
        schema = schema_of(hint)
        if p.name in arg_docs:
            schema = {**schema, "description": arg_docs[p.name]}
        if p.default is not p.empty:
            try:
                json.dumps(p.default)
                schema = {**schema, "default": p.default}
            except (TypeError, ValueError):
                pass
        else:
            required.append(p.name)
        props[p.name] = schema
    params: Dict[str, Any] = {"type": "object", "properties": props}
    if required:
        params["required"] = required
    t = BaseTool(name or func.__name__, desc, func, params, injected, handle_tool_error)
    t.return_direct = return_direct
    return t


def tool(*args: Any, description: Optional[str] = None, parse_docstring: bool = False,
         return_direct: bool = False, handle_tool_error: Any = False,
         **kwargs: Any) -> Any:
    """LangChain's @tool: `@tool`, `@tool("name")`, `@tool(parse_docstring=True)`,
    `tool(fn)` or `tool("name", fn)` make a function a tool."""
    if kwargs.pop("args_schema", None) is not None:
        raise NotImplementedError("tool: args_schema= is not supported; type hints are read")
    if kwargs:
        raise TypeError(f"tool: unexpected arguments {sorted(kwargs)}")

    def make(func: Callable, name: Optional[str] = None) -> BaseTool:
        return _make(func, name, description, parse_docstring, return_direct,
                     handle_tool_error)

    if len(args) == 2 and isinstance(args[0], str) and callable(args[1]):
        return make(args[1], args[0])
    if len(args) == 1 and callable(args[0]) and not isinstance(args[0], str):
        return make(args[0])
    if len(args) == 1 and isinstance(args[0], str):
        return lambda f: make(f, args[0])
    if not args:
        return make
    raise TypeError("tool: expected a function, a name, or a name and a function")


def as_tool(t: Any) -> BaseTool:
    """A BaseTool, or a plain function made one."""
    if isinstance(t, BaseTool):
        return t
    if callable(t):
        return tool(t)
    raise TypeError(f"expected a tool or a function, got {type(t).__name__}")


__all__ = [
    "BaseTool",
    "InjectedState",
    "InjectedStore",
    "InjectedToolArg",
    "InjectedToolCallId",
    "StructuredTool",
    "ToolException",
    "as_tool",
    "tool",
]
