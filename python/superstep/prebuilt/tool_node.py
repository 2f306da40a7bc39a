"""LangGraph's ToolNode and tools_condition (langgraph.prebuilt.tool_node): a graph
node that runs the tool calls of the last AI message with Python tools, and the
router that sends a conversation to it while the model asks for tools."""

from __future__ import annotations

import inspect
import json
import typing
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ..constants import END
from ..messages import AIMessage, ToolMessage, _from_value
from ..tools import (BaseTool, InjectedState, InjectedStore, InjectedToolCallId,
                     ToolException, as_tool, _content)
from ..types import Command

INVALID_TOOL_NAME_ERROR_TEMPLATE = (
    "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
)
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."
TOOL_INVOCATION_ERROR_TEMPLATE = (
    "Error invoking tool '{tool_name}' with kwargs {tool_kwargs} with error:\n"
    " {error}\n"
    " Please fix the error and try again."
)


class ToolInvocationError(ToolException):
    """A tool call whose arguments do not match the tool's schema."""

    def __init__(self, tool_name: str, errors: List[str], tool_kwargs: dict) -> None:
        self.message = TOOL_INVOCATION_ERROR_TEMPLATE.format(
            tool_name=tool_name, tool_kwargs=tool_kwargs, error="\n ".join(errors))
        self.tool_name = tool_name
        self.tool_kwargs = tool_kwargs
        super().__init__(self.message)


def _default_handle_tool_errors(e: Exception) -> str:
    """LangGraph's default: arguments that do not match are told to the model; any other
    error is raised."""
    if isinstance(e, ToolInvocationError):
        return e.message
    raise e


def _handled_types(handler: Callable) -> tuple:
    """The exception types a handler's first parameter is annotated with (Exception when
    it has none), as LangGraph infers them."""
    try:
        hints = typing.get_type_hints(handler)
        first = next(iter(inspect.signature(handler).parameters))
    except (TypeError, ValueError, NameError, StopIteration):
        return (Exception,)
    hint = hints.get(first)
    if hint is None:
        return (Exception,)
    args = typing.get_args(hint) if typing.get_origin(hint) is Union else (hint,)
    types = tuple(a for a in args if isinstance(a, type) and issubclass(a, BaseException))
    return types or (Exception,)


def _last_ai(messages: Sequence[Any]) -> AIMessage:
    for m in reversed(messages):
        m = _from_value(m) if isinstance(m, dict) else m
        if isinstance(m, AIMessage):
            return m
    raise ValueError("No AIMessage found in input")


def _is_marker(marker: Any, cls: type) -> bool:
    return marker is cls or isinstance(marker, cls)


class ToolNode:
    """A node running the tool calls of the last AIMessage in the state's messages (or of
    a list of messages, or one tool call sent with Send), each with its tool; the results
    are ToolMessages ({"messages": [...]} for a state). A tool may return a Command,
    which the node returns as its own. Arguments that do not match a tool's schema are
    told to the model; what a tool raises is raised, as LangGraph's default. With
    handle_tool_errors True (any exception), an exception type or tuple of them, a
    string, or a function of the exception (catching the types its first parameter is
    annotated with), errors become ToolMessages with status "error"; False raises all."""

    def __init__(self, tools: Sequence[Union[BaseTool, Callable]], *, name: str = "tools",
                 tags: Optional[List[str]] = None,
                 handle_tool_errors: Any = _default_handle_tool_errors,
                 messages_key: str = "messages") -> None:
        self.name = name
        self.tags = tags
        self.handle_tool_errors = handle_tool_errors
        self.messages_key = messages_key
        self.tools_by_name: Dict[str, BaseTool] = {}
        for t in tools:
            bt = as_tool(t)
            self.tools_by_name[bt.name] = bt

    def __repr__(self) -> str:
        return f"ToolNode(tools={list(self.tools_by_name)})"

    # -- as a node: (state, config, store) --

    def __call__(self, input: Any, config: Any = None, store: Any = None) -> Any:
        return self.invoke(input, config, store=store)

    def invoke(self, input: Any, config: Any = None, *, store: Any = None, **kwargs: Any) -> Any:
        if store is None and isinstance(config, dict):  # LangGraph's runtime in a config
            runtime = (config.get("configurable") or {}).get("__pregel_runtime")
            store = getattr(runtime, "store", None)
        calls, kind, state = self._parse(input)
        outs = [self._run_one(c, state, store) for c in calls]
        commands = [o for o in outs if isinstance(o, Command)]
        messages = [o for o in outs if not isinstance(o, Command)]
        if not commands:
            return messages if kind == "list" else {self.messages_key: messages}
        # Commands (and messages) in the order of the calls, as LangGraph returns them.
        result: List[Any] = []
        for o in outs:
            if isinstance(o, Command):
                result.append(o)
            elif kind == "list":
                result.append([o])
            else:
                result.append({self.messages_key: [o]})
        return result

    def _parse(self, input: Any) -> tuple:
        if isinstance(input, dict) and input.get("type") == "tool_call":
            return [input], "dict", {}
        if isinstance(input, dict) and input.get("__type") == "tool_call_with_context":
            return [input["tool_call"]], "dict", input.get("state") or {}
        if isinstance(input, list):
            return list(_last_ai(input).tool_calls), "list", {self.messages_key: input}
        if isinstance(input, dict):
            messages = input.get(self.messages_key)
            if messages is None:
                raise ValueError(f"No message found in input (key {self.messages_key!r})")
            return list(_last_ai(messages).tool_calls), "dict", input
        messages = getattr(input, self.messages_key, None)
        if messages is None:
            raise ValueError("No message found in input")
        return list(_last_ai(messages).tool_calls), "dict", input

    def _inject(self, t: BaseTool, call: dict, state: Any, store: Any) -> dict:
        out = {}
        for arg, marker in t.injected.items():
            if _is_marker(marker, InjectedToolCallId):
                out[arg] = call.get("id")
            elif _is_marker(marker, InjectedStore):
                if store is None:
                    raise ValueError(
                        "Cannot inject store into tools with InjectedStore annotations - "
                        "please compile your graph with a store."
                    )
                out[arg] = store
            elif _is_marker(marker, InjectedState):
                field = getattr(marker, "field", None)
                if field is None:
                    out[arg] = state
                elif isinstance(state, dict):
                    out[arg] = state.get(field)
                else:
                    out[arg] = getattr(state, field, None)
        return out

    def _error_text(self, e: Exception) -> Optional[str]:
        """The tool message's text for @p e, or None to raise it."""
        h = self.handle_tool_errors
        if h is False:
            return None
        if h is True:
            return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e))
        if isinstance(h, str):
            return h
        if isinstance(h, (type, tuple)):
            return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e)) if isinstance(e, h) else None
        if h is _default_handle_tool_errors:
            return e.message if isinstance(e, ToolInvocationError) else None
        return h(e) if isinstance(e, _handled_types(h)) else None

    def _run_one(self, call: dict, state: Any, store: Any) -> Any:
        name = call.get("name")
        t = self.tools_by_name.get(name)
        if t is None:
            return ToolMessage(
                INVALID_TOOL_NAME_ERROR_TEMPLATE.format(
                    requested_tool=name, available_tools=", ".join(self.tools_by_name)),
                name=name, tool_call_id=call.get("id"), status="error")
        args = call.get("args") or {}
        if isinstance(args, str):
            args = json.loads(args) if args else {}
        # Values the model gave for injected arguments are never used.
        args = {k: v for k, v in args.items() if k not in t.injected}
        injected = self._inject(t, call, state, store)  # a missing store is no tool error
        try:
            errors = t.validate(args)
            if errors:
                raise ToolInvocationError(name, errors, args)
            try:
                out = t._run(args, injected)
            except ToolException as e:
                if not t.handle_tool_error:  # the tool's own handler (LangChain's) first
                    raise
                h = t.handle_tool_error
                text = h if isinstance(h, str) else h(e) if callable(h) else str(e)
                return ToolMessage(text, name=name, tool_call_id=call.get("id"),
                                   status="error")
        except Exception as e:
            from ..errors import GraphBubbleUp

            if isinstance(e, GraphBubbleUp):  # interrupt(), Command.PARENT
                raise
            text = self._error_text(e)
            if text is None:
                raise
            return ToolMessage(text, name=name, tool_call_id=call.get("id"), status="error")
        if isinstance(out, (Command, ToolMessage)):
            return out
        return ToolMessage(_content(out), name=name, tool_call_id=call.get("id"))


def tools_condition(state: Any, messages_key: str = "messages") -> str:
    """"tools" when the last message is an AI message with tool calls, else END: the
    router between a model node and a ToolNode."""
    if isinstance(state, list):
        messages = state
    elif isinstance(state, dict):
        messages = state.get(messages_key)
    else:
        messages = getattr(state, messages_key, None)
    if not messages:
        raise ValueError(f"No messages found in input state to tool_edge: {state}")
    last = messages[-1]
    last = _from_value(last) if isinstance(last, dict) else last
    return "tools" if getattr(last, "tool_calls", None) else END


__all__ = ["ToolNode", "tools_condition", "InjectedState", "InjectedStore",
           "ToolInvocationError", "INVALID_TOOL_NAME_ERROR_TEMPLATE",
           "TOOL_CALL_ERROR_TEMPLATE", "TOOL_INVOCATION_ERROR_TEMPLATE"]
