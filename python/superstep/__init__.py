"""superstep: LangGraph's Python API on superstep's C engine (docs/python.md).

Porting a LangGraph program is changing `langgraph` to `superstep` in imports:
superstep.graph (StateGraph, START, END), superstep.types (Send, Command,
interrupt, RetryPolicy), superstep.checkpoint (InMemorySaver, SqliteSaver),
superstep.errors.
"""

from . import _core
from .graph import END, START, CompiledStateGraph, MessagesState, StateGraph, add_messages

__version__ = _core.version

__all__ = ["StateGraph", "CompiledStateGraph", "START", "END", "MessagesState", "add_messages"]
