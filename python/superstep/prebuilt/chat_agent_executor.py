"""LangGraph's create_react_agent (langgraph.prebuilt.chat_agent_executor) over
superstep's agent layer (sst_agent_new, docs/agent.md): the model node, the tool
tasks (one per tool call, in parallel), structured output and the middleware are
C; Python tools are called with the GIL only while they run."""

from __future__ import annotations

from typing import Annotated, Any, Callable, Dict, List, Optional, Sequence, TypedDict, Union

from .. import _core
from ..chat_models import BaseChatModel, _response_format, init_chat_model
from ..graph import CompiledStateGraph, add_messages
from ..messages import AnyMessage, SystemMessage
from ..tools import BaseTool, as_tool
from .middleware import AgentMiddleware

# The agent's node names, and LangGraph's for them (interrupt_before=["tools"]).
_NODE_NAMES = {"agent": "llm_call", "tools": "tool"}
_STRATEGIES = {None: 0, "auto": 0, "tool": 1, "provider": 2}


class AgentState(TypedDict, total=False):
    """The agent's state: the conversation, and the structured answer when asked for."""

    messages: Annotated[List[AnyMessage], add_messages]
    structured_response: Any


class _AgentBuilder:
    """What CompiledStateGraph asks of a builder, for an agent's graph."""

    root = None
    message_fields = ("messages",)
    input_schema = AgentState
    output_schema = AgentState
    context_schema = None
    state_schema = AgentState


def _tool_entry(t: BaseTool) -> tuple:
    if t.injected:
        raise NotImplementedError(
            f"create_react_agent: tool {t.name!r} takes injected arguments "
            f"({', '.join(t.injected)}); run it with a ToolNode in a StateGraph"
        )

    def call(args: dict) -> tuple:
        try:
            out = t._run(args)
        except Exception as e:  # the model reads it as "error: ..."
            return (False, repr(e))
        return (True, out)

    return (t.name, t.description, t.args_schema, call)


def _prompt(prompt: Any) -> Optional[str]:
    if prompt is None:
        return None
    if isinstance(prompt, str):
        return prompt
    if isinstance(prompt, SystemMessage):
        return prompt.text() if callable(getattr(prompt, "text", None)) else str(prompt.content)
    raise NotImplementedError(
        "create_react_agent: prompt must be a string or a SystemMessage (a callable or a "
        "runnable prompt is not supported; use a middleware)"
    )


class CompiledAgent(CompiledStateGraph):
    """A prebuilt agent: a compiled graph (invoke, stream, get_state, ...) whose default
    recursion limit fits its max_iterations and whose interrupt lists take LangGraph's
    node names ("agent", "tools") as well as the agent's own ("llm_call", "tool")."""

    def __init__(self, agent: Any, cg: Any, checkpointer: Any, name: str, store: Any,
                 interrupt_before: Any, interrupt_after: Any) -> None:
        super().__init__(_AgentBuilder(), cg, checkpointer, name)
        self._agent = agent
        self.store = store
        self._before = interrupt_before
        self._after = interrupt_after

    @staticmethod
    def _public(state: Any) -> Any:
        if not isinstance(state, dict):
            return state
        return {k: v for k, v in state.items()
                if k in ("messages", "structured_response") or k.endswith("_call_count")}

    def _output(self, state: Any) -> Any:
        """The agent's state as LangGraph's agents give it: the conversation, the structured
        answer and the middleware's counts, without the agent layer's working fields."""
        return self._public(super()._output(state))

    def _chunk(self, mode: str, ev: Any) -> Any:
        ev = super()._chunk(mode, ev)
        if mode == "updates" and isinstance(ev, dict):  # each node's update, likewise
            return {k: self._public(v) if k != "__interrupt__" else v for k, v in ev.items()}
        return ev

    @staticmethod
    def _names(v: Any) -> Any:
        if v is None or v == "*":
            return v
        return [_NODE_NAMES.get(x, x) for x in v]

    def _prepare(self, input: Any, config: Optional[dict], context: Any,
                 interrupt_before: Any, interrupt_after: Any, durability: Any,
                 subgraphs: bool = False) -> Dict[str, Any]:
        config = dict(config or {})
        config.setdefault("recursion_limit", self._agent.recursion_limit())
        return super()._prepare(
            input, config, context,
            self._names(interrupt_before if interrupt_before is not None else self._before),
            self._names(interrupt_after if interrupt_after is not None else self._after),
            durability, subgraphs)


def create_react_agent(model: Any, tools: Sequence[Union[BaseTool, Callable]] = (), *,
                       prompt: Any = None, response_format: Any = None,
                       checkpointer: Any = None, store: Any = None,
                       interrupt_before: Optional[List[str]] = None,
                       interrupt_after: Optional[List[str]] = None,
                       middleware: Sequence[AgentMiddleware] = (),
                       max_iterations: Optional[int] = None,
                       structured_strategy: Optional[str] = None,
                       structured_attempts: Optional[int] = None,
                       name: Optional[str] = None, debug: bool = False,
                       workers: int = 4, **kwargs: Any) -> CompiledAgent:
    """A ReAct agent: the model is called with the conversation and the tools; each tool
    call it makes runs (in parallel, results in call order) and the model is called again,
    until it answers without tools (or max_iterations model calls, default 10).

    `model`: a superstep chat model (ChatOpenAI, ChatAnthropic, ChatScripted) or a
    "provider:model" name. `tools`: tools (superstep.tools.tool) or plain functions.
    `prompt`: the system prompt (a string or SystemMessage). `response_format`: a JSON
    schema, TypedDict or dataclass the final answer must match, kept in
    state["structured_response"]. `middleware`: superstep.prebuilt's middleware."""
    for unsupported in ("state_schema", "context_schema", "pre_model_hook",
                        "post_model_hook", "config_schema"):
        if kwargs.pop(unsupported, None) is not None:
            raise NotImplementedError(f"create_react_agent: {unsupported}= is not supported")
    kwargs.pop("version", None)
    if kwargs:
        raise TypeError(f"create_react_agent: unexpected arguments {sorted(kwargs)}")
    if isinstance(model, str):
        model = init_chat_model(model)
    if not isinstance(model, BaseChatModel):
        raise TypeError(
            f"create_react_agent: model must be a superstep chat model (ChatOpenAI, "
            f"ChatAnthropic, ChatScripted) or a 'provider:model' name, got "
            f"{type(model).__name__}"
        )
    from ..checkpoint import BaseCheckpointSaver

    if checkpointer is not None and not isinstance(checkpointer, BaseCheckpointSaver):
        raise TypeError("create_react_agent: checkpointer must be a superstep checkpointer")
    if structured_strategy not in _STRATEGIES:
        raise ValueError("structured_strategy must be 'tool', 'provider' or None")
    opts: Dict[str, Any] = dict(
        system_prompt=_prompt(prompt),
        response_format=_response_format(response_format) if response_format is not None
        else None,
        structured_strategy=_STRATEGIES[structured_strategy],
        middleware=list(middleware),
        store=store,
    )
    if max_iterations is not None:
        opts["max_iterations"] = max_iterations
    if structured_attempts is not None:
        opts["structured_attempts"] = structured_attempts
    agent = _core.Agent(model, [_tool_entry(as_tool(t)) for t in tools], **opts)
    cg = agent.compiled(checkpointer, workers)
    return CompiledAgent(agent, cg, checkpointer, name or "agent", store, interrupt_before,
                         interrupt_after)


__all__ = ["AgentState", "CompiledAgent", "create_react_agent"]
