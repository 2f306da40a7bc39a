"""LangGraph's langgraph.constants: the names of a graph's start and end."""

from .graph import END, START

__all__ = ["START", "END"]
