"""Agent middleware (docs/agent.md, "Middleware"), with LangChain 1.x's names
(langchain.agents.middleware): the agent layer's built-ins, which are C (their hooks
run as nodes and wrappers of the agent's graph, without the GIL), and middleware
written in Python (AgentMiddleware subclasses with node hooks)."""

from __future__ import annotations

from typing import Any, Dict, List, Optional

import inspect
import json
import weakref

from .. import _core
from ..graph import Runtime, _with_messages
from ..messages import AIMessage, BaseMessage, ToolMessage, _from_list, _from_value, \
    _tool_call, convert_to_messages

_HOOKS = ("before_agent", "before_model", "after_model", "after_agent")
_JUMPS = ("model", "tools", "end")


def _hook(fn: Any, where: str) -> Any:
    """A node hook as the C layer calls it: fn(state) -> (update, jump_to). A method is
    held weakly: the C middleware holds this wrapper, and the middleware object holds the C
    middleware (a cycle the garbage collector cannot see); whoever uses the middleware (an
    agent) keeps the object alive."""
    try:
        wants_runtime = len(inspect.signature(fn).parameters) >= 2
    except (TypeError, ValueError):
        wants_runtime = False
    get = weakref.WeakMethod(fn) if inspect.ismethod(fn) else (lambda: fn)

    def call(state: dict) -> Any:
        f = get()
        if f is None:
            raise RuntimeError(f"{where}: the middleware object is gone")
        state = _with_messages(state, ("messages",))
        out = f(state, Runtime()) if wants_runtime else f(state)
        if out is None:
            return None
        if not isinstance(out, dict):
            raise TypeError(f"{where}: a hook returns a dict (an update) or None, "
                            f"got {type(out).__name__}")
        out = dict(out)
        jump = out.pop("jump_to", None)
        if jump is not None and jump not in _JUMPS:
            raise ValueError(f"{where}: jump_to must be 'model', 'tools' or 'end', "
                             f"got {jump!r}")
        return (out or None, jump)

    return call


class ToolCallRequest:
    """A tool call as wrap_tool_call sees it: `tool_call` ({"name", "args", "id"},
    LangChain's form). `override(tool_call=...)` gives a changed copy."""

    def __init__(self, tool_call: Dict[str, Any]) -> None:
        self.tool_call = tool_call

    def override(self, **kw: Any) -> "ToolCallRequest":
        return ToolCallRequest(kw.get("tool_call", self.tool_call))


class ModelRequest:
    """A model call as wrap_model_call sees it: `messages` (message objects, without the
    system prompt), `system_prompt` (str or None), `tools` (as chat completions lists
    them). `override(...)` gives a changed copy."""

    def __init__(self, messages: List[Any], system_prompt: Optional[str],
                 tools: List[dict]) -> None:
        self.messages = messages
        self.system_prompt = system_prompt
        self.tools = tools

    def override(self, **kw: Any) -> "ModelRequest":
        return ModelRequest(kw.get("messages", self.messages),
                            kw.get("system_prompt", self.system_prompt),
                            kw.get("tools", self.tools))


def _wrap_tool(fn: Any, where: str) -> Any:
    """wrap_tool_call(request, handler) as the C layer calls it: (call, next) -> message."""
    get = weakref.WeakMethod(fn) if inspect.ismethod(fn) else (lambda: fn)

    def call(c_call: dict, c_next: Any) -> dict:
        f = get()
        if f is None:
            raise RuntimeError(f"{where}: the middleware object is gone")
        tc = _tool_call(c_call)
        tc.pop("type", None)

        def handler(req: ToolCallRequest) -> ToolMessage:
            t = req.tool_call
            return _from_value(c_next({"id": t.get("id"), "type": "function", "function": {
                "name": t["name"], "arguments": json.dumps(t.get("args") or {})}}))

        out = f(ToolCallRequest(tc), handler)
        if isinstance(out, str):
            out = ToolMessage(out, tool_call_id=tc.get("id"), name=tc.get("name"))
        if isinstance(out, BaseMessage):
            return out._to_dict()
        if isinstance(out, dict):
            return out
        raise TypeError(f"{where}: return a ToolMessage (the handler's, or one of yours), "
                        f"got {type(out).__name__}")

    return call


def _wrap_model(fn: Any, where: str) -> Any:
    """wrap_model_call(request, handler) as the C layer calls it:
    (messages, system_prompt, tools, next) -> reply."""
    get = weakref.WeakMethod(fn) if inspect.ismethod(fn) else (lambda: fn)

    def call(messages: list, system_prompt: Optional[str], tools: list, c_next: Any) -> dict:
        f = get()
        if f is None:
            raise RuntimeError(f"{where}: the middleware object is gone")
        made: List[tuple] = []  # (message, the reply it came from), kept alive here

        def handler(req: ModelRequest) -> AIMessage:
            msgs = [m._to_dict() for m in convert_to_messages(req.messages)]
            reply = c_next(msgs, req.system_prompt, list(req.tools or []))
            msg = _from_value(reply)
            made.append((msg, reply))
            return msg

        out = f(ModelRequest(_from_list(messages), system_prompt, tools), handler)
        if isinstance(out, BaseMessage):
            # The handler's reply unchanged: its dict as the model gave it (usage, metadata,
            # a structured answer); else the message the hook made.
            return next((r for m, r in made if m is out), None) or out._to_dict()
        if isinstance(out, dict):
            return out
        raise TypeError(f"{where}: return an AIMessage (the handler's, or one of yours), "
                        f"got {type(out).__name__}")

    return call


class AgentMiddleware(_core.Middleware):
    """A middleware of create_react_agent(middleware=[...]). Subclass it and define node
    hooks, LangChain's: `before_agent`, `before_model`, `after_model`, `after_agent`, each
    `(self, state)` or `(self, state, runtime)`, returning an update of the agent's state
    (e.g. {"messages": [...]}), optionally with "jump_to": "model" | "tools" | "end", or
    None. A hook is a node of the agent's graph: it is checkpointed, and interrupt() in it
    pauses the run. `name` (default: the class's name) names its nodes
    ("<name>.before_model"). Wrap hooks: `wrap_model_call(self, request, handler)` (a
    ModelRequest; `handler(request)` calls the rest of the chain and returns its
    AIMessage) and `wrap_tool_call(self, request, handler)` (a ToolCallRequest;
    `handler(request)` returns the ToolMessage); each returns the reply (the handler's, a
    changed one, or its own) and may call the handler zero, one or several times."""

    name: Optional[str] = None

    def __init__(self) -> None:
        cls = type(self)
        for wrap in ("awrap_model_call", "awrap_tool_call"):
            if callable(getattr(cls, wrap, None)):
                raise NotImplementedError(f"{cls.__name__}.{wrap}: async hooks are not supported")
        name = cls.__dict__.get("name") or getattr(self, "name", None) or cls.__name__
        hooks = {h: _hook(getattr(self, h), f"{name}.{h}") for h in _HOOKS
                 if callable(getattr(self, h, None))}
        if callable(getattr(self, "wrap_tool_call", None)):
            hooks["wrap_tool_call"] = _wrap_tool(self.wrap_tool_call, f"{name}.wrap_tool_call")
        if callable(getattr(self, "wrap_model_call", None)):
            hooks["wrap_model_call"] = _wrap_model(self.wrap_model_call,
                                                   f"{name}.wrap_model_call")
        if not hooks:
            raise ValueError(f"middleware {name!r}: define a hook ({', '.join(_HOOKS)}, "
                             f"wrap_model_call, wrap_tool_call)")
        _core.Middleware.__init__(self, "python", name=name, hooks=hooks)


class _BuiltIn(AgentMiddleware):
    """A built-in middleware of the agent layer."""

    def __init__(self, kind: str, **kwargs: Any) -> None:
        _core.Middleware.__init__(self, kind, **kwargs)


class HumanInTheLoopMiddleware(_BuiltIn):
    """Interrupt before the tools `interrupt_on` names (True, False, or {"allowed_decisions":
    [...], "description": ...}); resume with Command(resume={"decisions": [...]})."""

    def __init__(self, interrupt_on: Dict[str, Any], **kwargs: Any) -> None:
        kwargs.pop("description_prefix", None)
        if kwargs:
            raise TypeError(f"HumanInTheLoopMiddleware: unexpected arguments {sorted(kwargs)}")
        super().__init__("human_in_the_loop", interrupt_on=interrupt_on)


def _count(spec: Any, kind: str, what: str) -> int:
    """LangChain's ("tokens", n) / ("messages", n) forms, or a number."""
    if isinstance(spec, tuple) and len(spec) == 2:
        if spec[0] != kind:
            raise ValueError(f"SummarizationMiddleware: {what} counts {kind} here, got {spec!r}")
        spec = spec[1]
    if not isinstance(spec, int) or isinstance(spec, bool) or spec < 0:
        raise ValueError(f"SummarizationMiddleware: {what} must be a count, got {spec!r}")
    return spec


class SummarizationMiddleware(_BuiltIn):
    """Before a model call past `trigger` tokens (estimated at 4 characters a token), the
    messages before the last `keep` are summarized by `model` and replaced."""

    def __init__(self, model: Any, trigger: Any = None, keep: Any = ("messages", 20), *,
                 max_tokens_before_summary: Optional[int] = None,
                 messages_to_keep: Optional[int] = None) -> None:
        from ..chat_models import BaseChatModel, init_chat_model

        if isinstance(model, str):
            model = init_chat_model(model)
        if not isinstance(model, BaseChatModel):
            raise TypeError("SummarizationMiddleware: model must be a superstep chat model")
        trigger = max_tokens_before_summary if trigger is None else trigger
        if trigger is None:
            raise ValueError("SummarizationMiddleware: give trigger=('tokens', N)")
        keep = messages_to_keep if messages_to_keep is not None else keep
        super().__init__("summarization", model=model,
                         trigger_tokens=_count(trigger, "tokens", "trigger"),
                         keep_messages=_count(keep, "messages", "keep"))


class ModelCallLimitMiddleware(_BuiltIn):
    """At most `thread_limit` model calls per thread and `run_limit` per invoke (None: no
    limit); at the limit, exit_behavior "end" ends the run with a message, "error" fails
    it."""

    def __init__(self, *, thread_limit: Optional[int] = None, run_limit: Optional[int] = None,
                 exit_behavior: str = "end") -> None:
        super().__init__("model_call_limit",
                         thread_limit=-1 if thread_limit is None else thread_limit,
                         run_limit=-1 if run_limit is None else run_limit,
                         exit_behavior=exit_behavior)


class ToolCallLimitMiddleware(_BuiltIn):
    """At most `thread_limit` / `run_limit` calls of `tool_name` (None: of all tools); at
    the limit "continue" answers the calls over it with an error, "end" ends the run,
    "error" fails it."""

    def __init__(self, *, tool_name: Optional[str] = None, thread_limit: Optional[int] = None,
                 run_limit: Optional[int] = None, exit_behavior: str = "continue") -> None:
        super().__init__("tool_call_limit", tool_name=tool_name,
                         thread_limit=-1 if thread_limit is None else thread_limit,
                         run_limit=-1 if run_limit is None else run_limit,
                         exit_behavior=exit_behavior)


class ModelFallbackMiddleware(_BuiltIn):
    """A model call that fails goes to the fallback models in order (transient failures
    are first retried `retries` times)."""

    def __init__(self, first_model: Any, *additional_models: Any, retries: int = 2) -> None:
        from ..chat_models import init_chat_model

        models = [init_chat_model(m) if isinstance(m, str) else m
                  for m in (first_model, *additional_models)]
        super().__init__("model_fallback", models=models, retries=retries)


__all__ = [
    "AgentMiddleware",
    "ModelRequest",
    "ToolCallRequest",
    "HumanInTheLoopMiddleware",
    "ModelCallLimitMiddleware",
    "ModelFallbackMiddleware",
    "SummarizationMiddleware",
    "ToolCallLimitMiddleware",
]
