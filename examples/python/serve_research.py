"""The research workflow of research.py as a served graph (examples/python/langgraph.json):

  superstep serve examples/python/langgraph.json --db /tmp/research.db --port 8125

`superstep serve` sees a Python graph and runs `python3 -m superstep serve` with the
same arguments; the server gives the graph its checkpointer (docs/python.md, "Serving").
"""
from research import build

graph = build(None)
