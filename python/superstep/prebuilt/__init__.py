"""LangGraph's prebuilt agents (langgraph.prebuilt) on superstep: create_react_agent
over the agent layer (docs/agent.md), ToolNode and tools_condition for graphs of
your own, and the agent layer's middleware."""

from ..tools import InjectedState, InjectedStore, InjectedToolCallId
from .chat_agent_executor import AgentState, CompiledAgent, create_react_agent
from .middleware import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    SummarizationMiddleware,
    ToolCallLimitMiddleware,
)
from .tool_node import ToolNode, tools_condition

__all__ = [
    "AgentMiddleware",
    "AgentState",
    "CompiledAgent",
    "HumanInTheLoopMiddleware",
    "InjectedState",
    "InjectedStore",
    "InjectedToolCallId",
    "ModelCallLimitMiddleware",
    "ModelFallbackMiddleware",
    "SummarizationMiddleware",
    "ToolCallLimitMiddleware",
    "ToolNode",
    "create_react_agent",
    "tools_condition",
]
