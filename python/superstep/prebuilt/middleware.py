"""Agent middleware (docs/agent.md, "Middleware"), with LangChain 1.x's names
(langchain.agents.middleware): the agent layer's built-ins, which are C (their hooks
run as nodes and wrappers of the agent's graph, without the GIL), and middleware
written in Python (AgentMiddleware subclasses with node hooks)."""

from __future__ import annotations

from typing import Any, Dict, Optional

import inspect
import weakref

from .. import _core
from ..graph import Runtime, _with_messages

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


class AgentMiddleware(_core.Middleware):
    """A middleware of create_react_agent(middleware=[...]). Subclass it and define node
    hooks, LangChain's: `before_agent`, `before_model`, `after_model`, `after_agent`, each
    `(self, state)` or `(self, state, runtime)`, returning an update of the agent's state
    (e.g. {"messages": [...]}), optionally with "jump_to": "model" | "tools" | "end", or
    None. A hook is a node of the agent's graph: it is checkpointed, and interrupt() in it
    pauses the run. `name` (default: the class's name) names its nodes
    ("<name>.before_model"). Wrap hooks (wrap_model_call, wrap_tool_call) are the C
    layer's only."""

    name: Optional[str] = None

    def __init__(self) -> None:
        cls = type(self)
        for wrap in ("wrap_model_call", "wrap_tool_call", "awrap_model_call",
                     "awrap_tool_call"):
            if callable(getattr(cls, wrap, None)):
                raise NotImplementedError(
                    f"{cls.__name__}.{wrap}: wrap hooks written in Python are not supported"
                )
        name = cls.__dict__.get("name") or getattr(self, "name", None) or cls.__name__
        hooks = {h: _hook(getattr(self, h), f"{name}.{h}") for h in _HOOKS
                 if callable(getattr(self, h, None))}
        if not hooks:
            raise ValueError(f"middleware {name!r}: define a hook ({', '.join(_HOOKS)})")
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
    "HumanInTheLoopMiddleware",
    "ModelCallLimitMiddleware",
    "ModelFallbackMiddleware",
    "SummarizationMiddleware",
    "ToolCallLimitMiddleware",
]
