"""W1-W4 through superstep's Python API, for bench/python/run.sh: one workload per
process, one JSON line, as bench/langgraphjs/*.mjs and bench_side print them.

    workloads.py W1 N          loop of N supersteps, no checkpointer
    workloads.py W2 K          K Send tasks, no checkpointer
    workloads.py W3 ITERS DIR  chat of ITERS iterations on a SqliteSaver file in DIR
    workloads.py W4 T          T threads on one InMemorySaver, a 3-node chain each
    --workers=N                compile(workers=N) (default: compile's default, 4)
    --runs=N                   warm runs of W1/W2 (default 5): per_unit_us is their median,
                               best_us the fastest (one warm run is at the mercy of a busy
                               machine's scheduler)

The graphs are the LangGraph.js scripts' (bench/langgraphjs/w1_loop.mjs, w2_fanout.mjs,
w3_chat.mjs, w4_threads.mjs) and bench/workloads.c's, written with superstep.graph as a
LangGraph Python program would be. Like those, W1, W2 and W4 report warm runs (W1 and
W2: the median and the best of --runs after the first). Each line also has bare_us: the same Python functions (nodes and
routers) called directly, per unit, with the states a run gives them, so that the
engine's and the binding's share of a unit is the difference.
"""

import json
import operator
import os
import resource
import sys
import time
from typing import Annotated, TypedDict

from superstep.checkpoint import InMemorySaver, SqliteSaver
from superstep.graph import END, START, MessagesState, StateGraph
from superstep.types import Send


WORKERS = None  # compile(workers=): None is compile's default
RUNS = 5  # warm runs of W1 and W2


def now() -> float:
    return time.perf_counter()


def peak_rss_kib() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def warm(once) -> tuple:
    """The median and the best of RUNS warm runs of once() (seconds each)."""
    ts = sorted(once() for _ in range(RUNS))
    return ts[len(ts) // 2] if len(ts) % 2 else (ts[len(ts) // 2 - 1] + ts[len(ts) // 2]) / 2, ts[0]


def bare(fn, reps: int = 5) -> float:
    """The fastest of @reps timings of fn() (seconds): the bare calls are short and
    their best run is their cost without the machine's noise."""
    best = float("inf")
    for _ in range(reps):
        t0 = now()
        fn()
        best = min(best, now() - t0)
    return best


# ---- W1: `inc` adds 1 to a summed counter and loops back until counter = n ----

class W1State(TypedDict):
    counter: Annotated[int, operator.add]
    n: int


def w1_inc(state: W1State) -> dict:
    return {"counter": 1}


def w1_route(state: W1State) -> str:
    return END if state["counter"] >= state["n"] else "inc"


def w1(n: int) -> dict:
    g = StateGraph(W1State)
    g.add_node("inc", w1_inc)
    g.add_edge(START, "inc")
    g.add_conditional_edges("inc", w1_route, ["inc", END])
    app = g.compile(workers=WORKERS)
    cfg = {"recursion_limit": n + 10}

    def once() -> float:
        t0 = now()
        out = app.invoke({"counter": 0, "n": n}, cfg)
        dt = now() - t0
        assert out["counter"] == n, out
        return dt

    cold = once()
    med, best = warm(once)

    def calls() -> None:  # what each superstep calls: the node, then its router
        for i in range(n):
            w1_inc({"counter": i, "n": n})
            w1_route({"counter": i + 1, "n": n})

    return {"cold_wall_ms": cold * 1e3, "wall_ms": med * 1e3, "per_unit_us": med / n * 1e6,
            "best_us": best / n * 1e6, "runs": RUNS, "unit": "superstep",
            "bare_us": bare(calls) / n * 1e6}


# ---- W2: `split` fans out k Send("work", {x}); each appends 2x; `join` sums ----

class W2State(TypedDict):
    items: list
    results: Annotated[list, operator.add]
    total: int


def w2_split(state: W2State) -> dict:
    return {}


def w2_fan(state: W2State) -> list:
    return [Send("work", {"x": x}) for x in state["items"]]


def w2_work(arg: dict) -> dict:
    return {"results": [arg["x"] * 2]}


def w2_join(state: W2State) -> dict:
    return {"total": sum(state["results"])}


def w2(k: int) -> dict:
    g = StateGraph(W2State)
    g.add_node("split", w2_split)
    g.add_node("work", w2_work)
    g.add_node("join", w2_join)
    g.add_edge(START, "split")
    g.add_conditional_edges("split", w2_fan, ["work"])
    g.add_edge("work", "join")
    g.add_edge("join", END)
    app = g.compile(workers=WORKERS)
    items = list(range(k))

    def once() -> float:
        t0 = now()
        out = app.invoke({"items": items})
        dt = now() - t0
        assert out["total"] == k * (k - 1) and len(out["results"]) == k, out["total"]
        return dt

    cold = once()
    med, best = warm(once)
    state = {"items": items, "results": [2 * x for x in items], "total": None}

    def calls() -> None:  # the split, the fan-out, k tasks, the join
        w2_split({"items": items, "results": []})
        for s in w2_fan(state):
            w2_work(s.arg)
        w2_join(state)

    return {"cold_wall_ms": cold * 1e3, "wall_ms": med * 1e3, "per_unit_us": med / k * 1e6,
            "best_us": best / k * 1e6, "runs": RUNS, "unit": "task",
            "bare_us": bare(calls) / k * 1e6}


# ---- W3: the chat loop, llm (a tool call) then tool (its reply), on SQLite ----

w3_ai = 0
w3_target = 0


def w3_llm(state: MessagesState) -> dict:
    global w3_ai
    w3_ai += 1
    return {"messages": [{
        "role": "assistant",
        "content": f"Step {w3_ai}: I will look this up with the search tool.",
        "tool_calls": [{"id": f"call_{w3_ai}", "type": "function",
                        "function": {"name": "search",
                                     "arguments": json.dumps({"query": f"question {w3_ai}"},
                                                             separators=(",", ":"))}}]}]}


def w3_tool(state: MessagesState) -> dict:
    last = state["messages"][-1]
    call = last["tool_calls"][0] if isinstance(last, dict) else last.tool_calls[0]
    return {"messages": [{"role": "tool", "tool_call_id": call["id"],
                          "content": f"Result for question {w3_ai}: 42 documents found."}]}


def w3_route(state: MessagesState) -> str:
    return END if w3_ai >= w3_target else "llm"


def w3(iters: int, where: str) -> dict:
    global w3_ai, w3_target
    db = os.path.join(where, f"w3py-{os.getpid()}.db")
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(db + suffix):
            os.remove(db + suffix)
    g = StateGraph(MessagesState)
    g.add_node("llm", w3_llm)
    g.add_node("tool", w3_tool)
    g.add_edge(START, "llm")
    g.add_edge("llm", "tool")
    g.add_conditional_edges("tool", w3_route, ["llm", END])
    saver = SqliteSaver(db)
    app = g.compile(checkpointer=saver, workers=WORKERS)
    cfg = {"recursion_limit": 10_000_000, "configurable": {"thread_id": "w3"}}
    total = 0.0
    growth = []
    for m, mark in enumerate((iters // 5, iters // 2, iters)):
        w3_target = mark
        text = "Find the answer." if m == 0 else "Go on."
        t0 = now()
        app.invoke({"messages": [{"role": "user", "content": text}]}, cfg)
        total += now() - t0
        growth.append({"iters": mark, "cum_wall_ms": total * 1e3})
    assert w3_ai == iters
    # bare: one llm and one tool call per iteration on a state of the final length
    msgs = app.get_state(cfg).values["messages"][:-1]  # ends with the AI's tool call
    w3_ai = 0

    def calls() -> None:
        for _ in range(iters):
            w3_llm({"messages": msgs})
            w3_tool({"messages": msgs})
            w3_route({"messages": msgs})

    bare_s = bare(calls, 3)
    del app, saver
    return {"wall_ms": total * 1e3, "per_unit_us": total / (2 * iters) * 1e6, "unit": "superstep",
            "bare_us": bare_s / (2 * iters) * 1e6, "growth": growth, "db": db}


# ---- W4: t threads on one saver, each a 3-node chain once ----

class W4State(TypedDict):
    value: int
    path: Annotated[list, operator.add]


def w4_a(s: W4State) -> dict:
    return {"value": s["value"] + 1, "path": ["a"]}


def w4_b(s: W4State) -> dict:
    return {"value": s["value"] * 2, "path": ["b"]}


def w4_c(s: W4State) -> dict:
    return {"value": s["value"] - 3, "path": ["c"]}


def w4(t: int) -> dict:
    g = StateGraph(W4State)
    g.add_node("a", w4_a)
    g.add_node("b", w4_b)
    g.add_node("c", w4_c)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_edge("b", "c")
    g.add_edge("c", END)
    app = g.compile(checkpointer=InMemorySaver(), workers=WORKERS)

    def runs(prefix: str) -> float:
        t0 = now()
        for i in range(t):
            out = app.invoke({"value": i}, {"configurable": {"thread_id": f"{prefix}-{i}"}})
            assert out["value"] == (i + 1) * 2 - 3 and len(out["path"]) == 3, out
        return now() - t0

    cold, warm = runs("cold"), runs("warm")

    def calls() -> None:
        for i in range(t):
            w4_a({"value": i, "path": []})
            w4_b({"value": i + 1, "path": ["a"]})
            w4_c({"value": 2 * i + 2, "path": ["a", "b"]})

    return {"cold_wall_ms": cold * 1e3, "wall_ms": warm * 1e3, "per_unit_us": warm / t * 1e6,
            "unit": "run", "runs_per_s": t / warm, "bare_us": bare(calls) / t * 1e6}


def main(argv: list) -> int:
    global WORKERS, RUNS
    for a in [a for a in argv if a.startswith("--workers=")]:
        WORKERS = int(a.split("=", 1)[1])
        argv = [x for x in argv if x != a]
    for a in [a for a in argv if a.startswith("--runs=")]:
        RUNS = max(1, int(a.split("=", 1)[1]))
        argv = [x for x in argv if x != a]
    if len(argv) < 3 or argv[1] not in ("W1", "W2", "W3", "W4") or \
            (argv[1] == "W3" and len(argv) < 4):
        print(__doc__, file=sys.stderr)
        return 2
    w, size = argv[1], int(argv[2])
    out = {"W1": lambda: w1(size), "W2": lambda: w2(size), "W3": lambda: w3(size, argv[3]),
           "W4": lambda: w4(size)}[w]()
    out = {"workload": w, "impl": "superstep-python", "size": size, "workers": WORKERS or 4, **out,
           "peak_rss_kib": peak_rss_kib()}
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
