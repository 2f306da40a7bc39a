"""The agent layer's built-in middleware (docs/agent.md, "Middleware"), with
LangChain 1.x's names (langchain.agents.middleware). Each is C: its hooks run as
nodes and wrappers of the agent's graph, without the GIL."""

from __future__ import annotations

from typing import Any, Dict, Optional, Sequence, Tuple, Union

from .. import _core


class AgentMiddleware(_core.Middleware):
    """A built-in middleware of the agent layer (create_react_agent(middleware=[...]))."""


class HumanInTheLoopMiddleware(AgentMiddleware):
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


class SummarizationMiddleware(AgentMiddleware):
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


class ModelCallLimitMiddleware(AgentMiddleware):
    """At most `thread_limit` model calls per thread and `run_limit` per invoke (None: no
    limit); at the limit, exit_behavior "end" ends the run with a message, "error" fails
    it."""

    def __init__(self, *, thread_limit: Optional[int] = None, run_limit: Optional[int] = None,
                 exit_behavior: str = "end") -> None:
        super().__init__("model_call_limit",
                         thread_limit=-1 if thread_limit is None else thread_limit,
                         run_limit=-1 if run_limit is None else run_limit,
                         exit_behavior=exit_behavior)


class ToolCallLimitMiddleware(AgentMiddleware):
    """At most `thread_limit` / `run_limit` calls of `tool_name` (None: of all tools); at
    the limit "continue" answers the calls over it with an error, "end" ends the run,
    "error" fails it."""

    def __init__(self, *, tool_name: Optional[str] = None, thread_limit: Optional[int] = None,
                 run_limit: Optional[int] = None, exit_behavior: str = "continue") -> None:
        super().__init__("tool_call_limit", tool_name=tool_name,
                         thread_limit=-1 if thread_limit is None else thread_limit,
                         run_limit=-1 if run_limit is None else run_limit,
                         exit_behavior=exit_behavior)


class ModelFallbackMiddleware(AgentMiddleware):
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
