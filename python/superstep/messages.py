"""Chat messages with LangChain's names and attributes (langchain_core.messages).

HumanMessage, AIMessage, SystemMessage, ToolMessage, ChatMessage and
RemoveMessage carry `content`, `id`, `name`, `type`, `additional_kwargs`,
`response_metadata` (AIMessage: `tool_calls`; ToolMessage: `tool_call_id`)
and compare equal as LangChain's do: same class, same fields.

The engine keeps messages as dicts in OpenAI's form ({"role", "content",
"id", "name", "tool_calls", "tool_call_id"}; docs/reducers.md). A message
object given to the engine (in an update, an input, a reducer) becomes such a
dict (_to_value, called by superstep._core for objects it does not know; a
LangChain message is taken too, duck-typed), and the fields reduced by
add_messages come back to Python as message objects of the class their role
names (_from_value). Tool calls are LangChain's {"name", "args", "id",
"type": "tool_call"} here and OpenAI's {"id", "type": "function",
"function": {"name", "arguments"}} in the engine.
"""

from __future__ import annotations

import json
from typing import Any, Dict, List, Optional, Sequence, Union

REMOVE_ALL_MESSAGES = "__remove_all__"

_BASE_FIELDS = ("content", "additional_kwargs", "response_metadata", "type", "name", "id")


class BaseMessage:
    """A chat message (LangChain's BaseMessage)."""

    type: str = ""
    _fields: tuple = _BASE_FIELDS

    def __init__(self, content: Any = "", **kwargs: Any) -> None:
        self.content = content
        self.additional_kwargs: Dict[str, Any] = dict(kwargs.pop("additional_kwargs", None) or {})
        self.response_metadata: Dict[str, Any] = dict(
            kwargs.pop("response_metadata", None) or {}
        )
        self.name: Optional[str] = kwargs.pop("name", None)
        self.id: Optional[str] = kwargs.pop("id", None)
        kwargs.pop("type", None)
        self._init_extra(kwargs)
        if kwargs:
            raise TypeError(f"{type(self).__name__}: unexpected arguments {sorted(kwargs)}")

    def _init_extra(self, kwargs: Dict[str, Any]) -> None:
        pass

    def _values(self) -> tuple:
        return tuple(getattr(self, f) for f in self._fields)

    def __eq__(self, other: object) -> bool:
        if type(other) is not type(self):
            return NotImplemented
        return self._values() == other._values()  # type: ignore[attr-defined]

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = []
        for f in self._fields:
            v = getattr(self, f)
            if f == "type" or (v in (None, {}, []) and f != "content"):
                continue
            parts.append(f"{f}={v!r}")
        return f"{type(self).__name__}({', '.join(parts)})"

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(
            b if isinstance(b, str) else b.get("text", "")
            for b in self.content
            if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text")
        )

    def model_dump(self) -> Dict[str, Any]:
        return {f: getattr(self, f) for f in self._fields}

    dict = model_dump

    def pretty_repr(self) -> str:
        return f"{type(self).__name__}: {self.content}"

    # the engine's form
    _role = ""

    def _to_dict(self) -> Dict[str, Any]:
        d: Dict[str, Any] = {"role": self._role, "content": self.content}
        if self.id is not None:
            d["id"] = self.id
        if self.name is not None:
            d["name"] = self.name
        if self.additional_kwargs:
            d["additional_kwargs"] = self.additional_kwargs
        if self.response_metadata:
            d["response_metadata"] = self.response_metadata
        return d


class HumanMessage(BaseMessage):
    type = "human"
    _role = "user"


class SystemMessage(BaseMessage):
    type = "system"
    _role = "system"


class AIMessage(BaseMessage):
    type = "ai"
    _role = "assistant"
    _fields = _BASE_FIELDS + ("tool_calls", "invalid_tool_calls", "usage_metadata")

    def _init_extra(self, kwargs: Dict[str, Any]) -> None:
        self.tool_calls: List[Dict[str, Any]] = [
            _tool_call(c) for c in kwargs.pop("tool_calls", None) or ()
        ]
        self.invalid_tool_calls: List[Dict[str, Any]] = list(
            kwargs.pop("invalid_tool_calls", None) or ()
        )
        self.usage_metadata: Optional[Dict[str, Any]] = kwargs.pop("usage_metadata", None)

    def _to_dict(self) -> Dict[str, Any]:
        d = super()._to_dict()
        if self.tool_calls:
            d["tool_calls"] = [
                {
                    "id": c.get("id"),
                    "type": "function",
                    "function": {"name": c.get("name"), "arguments": json.dumps(c.get("args", {}))},
                }
                for c in self.tool_calls
            ]
        if self.invalid_tool_calls:
            d["invalid_tool_calls"] = self.invalid_tool_calls
        if self.usage_metadata is not None:
            d["usage_metadata"] = self.usage_metadata
        return d


class AIMessageChunk(AIMessage):
    type = "AIMessageChunk"


class ToolMessage(BaseMessage):
    type = "tool"
    _role = "tool"
    _fields = _BASE_FIELDS + ("tool_call_id", "artifact", "status")

    def _init_extra(self, kwargs: Dict[str, Any]) -> None:
        self.tool_call_id: str = kwargs.pop("tool_call_id")
        self.artifact: Any = kwargs.pop("artifact", None)
        self.status: str = kwargs.pop("status", "success")

    def _to_dict(self) -> Dict[str, Any]:
        d = super()._to_dict()
        d["tool_call_id"] = self.tool_call_id
        if self.artifact is not None:
            d["artifact"] = self.artifact
        if self.status != "success":
            d["status"] = self.status
        return d


class ChatMessage(BaseMessage):
    """A message with any other role ("developer", "function")."""

    type = "chat"
    _fields = _BASE_FIELDS + ("role",)

    def _init_extra(self, kwargs: Dict[str, Any]) -> None:
        self.role: str = kwargs.pop("role")

    def _to_dict(self) -> Dict[str, Any]:
        d = super()._to_dict()
        d["role"] = self.role
        return d


class RemoveMessage(BaseMessage):
    """Removes the message with this id from an add_messages field
    (REMOVE_ALL_MESSAGES: every message before it)."""

    type = "remove"

    def __init__(self, id: str, **kwargs: Any) -> None:
        if kwargs.pop("content", None):
            raise ValueError("RemoveMessage does not support 'content' field.")
        super().__init__("", id=id, **kwargs)

    def _to_dict(self) -> Dict[str, Any]:
        return {"type": "remove", "id": self.id}


AnyMessage = Union[AIMessage, HumanMessage, ChatMessage, SystemMessage, ToolMessage, RemoveMessage]
MessageLikeRepresentation = Union[BaseMessage, list, tuple, str, dict]


def _tool_call(c: Dict[str, Any]) -> Dict[str, Any]:
    """A tool call in LangChain's form, from LangChain's or OpenAI's."""
    fn = c.get("function")
    if isinstance(fn, dict):
        args = fn.get("arguments")
        if isinstance(args, str):
            try:
                args = json.loads(args) if args else {}
            except ValueError:
                args = {}
        return {"name": fn.get("name"), "args": args or {}, "id": c.get("id"),
                "type": "tool_call"}
    out = dict(c)
    out.setdefault("args", {})
    out.setdefault("id", None)
    out["type"] = "tool_call"
    return out


_BY_ROLE = {
    "user": HumanMessage, "human": HumanMessage,
    "assistant": AIMessage, "ai": AIMessage,
    "system": SystemMessage, "tool": ToolMessage, "remove": RemoveMessage,
}
_KNOWN = {"role", "type", "content", "id", "name", "additional_kwargs", "response_metadata",
          "tool_calls", "invalid_tool_calls", "usage_metadata", "tool_call_id", "artifact",
          "status"}


def _from_value(v: Any) -> Any:
    """A message dict of the engine (or LangChain's dict form) as a message object; other
    values as they are."""
    if not isinstance(v, dict):
        return v
    role = v.get("role") or v.get("type")
    if not isinstance(role, str):
        return v
    if v.get("type") == "remove":
        return RemoveMessage(id=v.get("id"))
    cls = _BY_ROLE.get(role)
    kw: Dict[str, Any] = {"id": v.get("id"), "name": v.get("name"),
                          "additional_kwargs": dict(v.get("additional_kwargs") or {}),
                          "response_metadata": v.get("response_metadata")}
    extra = {k: x for k, x in v.items() if k not in _KNOWN}
    kw["additional_kwargs"].update(extra)
    if cls is None:
        return ChatMessage(v.get("content", ""), role=role, **kw)
    if cls is AIMessage:
        kw["tool_calls"] = v.get("tool_calls")
        kw["invalid_tool_calls"] = v.get("invalid_tool_calls")
        kw["usage_metadata"] = v.get("usage_metadata")
    elif cls is ToolMessage:
        kw["tool_call_id"] = v.get("tool_call_id")
        kw["artifact"] = v.get("artifact")
        kw["status"] = v.get("status") or "success"
    return cls(v.get("content", ""), **kw)


def _from_list(v: Any) -> Any:
    """The value of an add_messages field with its messages as objects."""
    if isinstance(v, list):
        return [_from_value(m) for m in v]
    return _from_value(v)


def _to_value(o: Any) -> Any:
    """A message object as the engine's message dict (superstep._core calls this for
    objects it does not know), or None for anything else. LangChain's messages are
    taken by duck typing: `type`, `content` and `model_dump`/`dict`."""
    if isinstance(o, BaseMessage):
        return o._to_dict()
    t = getattr(o, "type", None)
    if isinstance(t, str) and hasattr(o, "content") and (
        hasattr(o, "model_dump") or hasattr(o, "dict")
    ):
        data = o.model_dump() if hasattr(o, "model_dump") else o.dict()
        if not isinstance(data, dict):
            return None
        msg = _from_value({**data, "type": "ai" if t == "AIMessageChunk" else t})
        return msg._to_dict() if isinstance(msg, BaseMessage) else None
    return None


def ToolCall(name: str, args: Dict[str, Any], id: Optional[str],  # noqa: N802
             type: str = "tool_call") -> Dict[str, Any]:
    """A tool call as LangChain's ToolCall (a dict): {"name", "args", "id", "type"}."""
    return {"name": name, "args": args, "id": id, "type": type}


def convert_to_messages(messages: Sequence[Any]) -> List[BaseMessage]:
    """Message-like values (objects, dicts, (role, content) pairs, strings) as objects."""
    out: List[BaseMessage] = []
    for m in messages:
        if isinstance(m, BaseMessage):
            out.append(m)
        elif isinstance(m, str):
            out.append(HumanMessage(m))
        elif isinstance(m, (list, tuple)) and len(m) == 2:
            out.append(_from_value({"role": m[0], "content": m[1]}))
        elif isinstance(m, dict):
            out.append(_from_value(m))
        else:
            d = _to_value(m)
            if d is None:
                raise NotImplementedError(f"Unsupported message type: {type(m).__name__}")
            out.append(_from_value(d))
    return out


__all__ = [
    "AIMessage",
    "AIMessageChunk",
    "AnyMessage",
    "BaseMessage",
    "ChatMessage",
    "HumanMessage",
    "MessageLikeRepresentation",
    "REMOVE_ALL_MESSAGES",
    "RemoveMessage",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "convert_to_messages",
]
