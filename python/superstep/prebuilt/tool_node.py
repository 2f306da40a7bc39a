"""LangGraph's ToolNode and tools_condition (langgraph.prebuilt.tool_node): a graph
node that runs the tool calls of the last AI message with Python tools, and the
router that sends a conversation to it while the model asks for tools."""

from __future__ import annotations

import json
from typing import Any, Callable, Dict, List, Optional, Sequence, Union

from ..constants import END
from ..messages import AIMessage, ToolMessage, _from_value
from ..tools import (BaseTool, InjectedState, InjectedStore, InjectedToolCallId, as_tool,
                     _content)
from ..types import Command

INVALID_TOOL_NAME_ERROR_TEMPLATE = (
    "Error: {requested_tool} is not a valid tool, try one of [{available_tools}]."
)
TOOL_CALL_ERROR_TEMPLATE = "Error: {error}\n Please fix your mistakes."


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
    which the node returns as its own. Errors a tool raises become ToolMessages with
    status "error" (handle_tool_errors=True, a string, or a function of the exception),
    or are raised (False)."""

    def __init__(self, tools: Sequence[Union[BaseTool, Callable]], *, name: str = "tools",
                 tags: Optional[List[str]] = None,
                 handle_tool_errors: Union[bool, str, Callable[..., str]] = True,
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
        h = self.handle_tool_errors
        if h is False:
            return None
        if h is True:
            return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e))
        if isinstance(h, str):
            return h
        if isinstance(h, type) or isinstance(h, tuple):
            return TOOL_CALL_ERROR_TEMPLATE.format(error=repr(e)) if isinstance(e, h) else None
        return h(e)

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
        try:
            out = t._run(args, self._inject(t, call, state, store))
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
           "INVALID_TOOL_NAME_ERROR_TEMPLATE", "TOOL_CALL_ERROR_TEMPLATE"]
