"""LangGraph's async tests (libs/langgraph/tests/test_pregel_async.py) ported to superstep,
and the binding's own tests of `async def` nodes, tasks and entrypoints (superstep._aio).

Debian 12 has no pytest async plugin: each ported test is LangGraph's body, whole, inside
`async def main()` run by `asyncio.run` in a sync test; `async_checkpointer` is the
`sync_checkpointer` fixture (superstep's savers serve both). Nothing here waits on wall
time: ordering is shown with asyncio.Event and threading.Event.
"""

import asyncio
import operator
import threading
from typing import Annotated, Literal, TypedDict

import pytest

from superstep.checkpoint import BaseCheckpointSaver, InMemorySaver
from superstep.config import get_config, get_stream_writer
from superstep.func import entrypoint, task
from superstep.graph import END, START, StateGraph
from superstep.types import Command, Interrupt, Send, interrupt

from any_str import AnyStr

# A guard against a hang when something does not run concurrently: the tests fail
# instead of waiting forever (no assertion is made on how long anything takes).
HANG = 120


# ---- ported from LangGraph's test_pregel_async.py ----


def test_interrupt_multiple(sync_checkpointer: BaseCheckpointSaver):
    async def main():
        class State(TypedDict):
            my_key: Annotated[str, operator.add]

        async def node(s: State) -> State:
            answer = interrupt({"value": 1})
            answer2 = interrupt({"value": 2})
            return {"my_key": answer + " " + answer2}

        builder = StateGraph(State)
        builder.add_node("node", node)
        builder.add_edge(START, "node")

        graph = builder.compile(checkpointer=sync_checkpointer)
        thread1 = {"configurable": {"thread_id": "1"}}

        assert [
            e async for e in graph.astream({"my_key": "DE", "market": "DE"}, thread1)
        ] == [
            {
                "__interrupt__": (
                    Interrupt(
                        value={"value": 1},
                        id=AnyStr(),
                    ),
                )
            }
        ]

        assert [
            event
            async for event in graph.astream(
                Command(resume="answer 1", update={"my_key": "foofoo"}),
                thread1,
                stream_mode="updates",
            )
        ] == [
            {
                "__interrupt__": (
                    Interrupt(
                        value={"value": 2},
                        id=AnyStr(),
                    ),
                )
            }
        ]

        assert [
            event
            async for event in graph.astream(
                Command(resume="answer 2"), thread1, stream_mode="updates"
            )
        ] == [
            {"node": {"my_key": "answer 1 answer 2"}},
        ]

    asyncio.run(main())


def test_multiple_updates() -> None:
    async def main():
        class State(TypedDict):
            foo: Annotated[str, operator.add]

        def node_a(state):
            return [Command(update={"foo": "a1"}), Command(update={"foo": "a2"})]

        def node_b(state):
            return {"foo": "b"}

        graph = (
            StateGraph(State)
            .add_sequence([node_a, node_b])
            .add_edge(START, "node_a")
            .compile()
        )

        assert await graph.ainvoke({"foo": ""}) == {
            "foo": "a1a2b",
        }

        # only streams the last update from node_a
        assert [c async for c in graph.astream({"foo": ""}, stream_mode="updates")] == [
            {"node_a": [{"foo": "a1"}, {"foo": "a2"}]},
            {"node_b": {"foo": "b"}},
        ]

    asyncio.run(main())


def test_cond_edge_after_send() -> None:
    async def main():
        class Node:
            def __init__(self, name: str):
                self.name = name
                setattr(self, "__name__", name)

            async def __call__(self, state):
                return [self.name]

        async def send_for_fun(state):
            return [Send("2", state), Send("2", state)]

        async def route_to_three(state) -> Literal["3"]:
            return "3"

        builder = StateGraph(Annotated[list, operator.add])
        builder.add_node(Node("1"))
        builder.add_node(Node("2"))
        builder.add_node(Node("3"))
        builder.add_edge(START, "1")
        builder.add_conditional_edges("1", send_for_fun)
        builder.add_conditional_edges("2", route_to_three)
        graph = builder.compile()

        assert await graph.ainvoke(["0"]) == ["0", "1", "2", "2", "3"]

    asyncio.run(main())


def test_concurrent_emit_sends() -> None:
    async def main():
        class Node:
            def __init__(self, name: str):
                self.name = name
                setattr(self, "__name__", name)

            async def __call__(self, state):
                return (
                    [self.name]
                    if isinstance(state, list)
                    else ["|".join((self.name, str(state)))]
                )

        async def send_for_fun(state):
            return [Send("2", 1), Send("2", 2), "3.1"]

        async def send_for_profit(state):
            return [Send("2", 3), Send("2", 4)]

        async def route_to_three(state) -> Literal["3"]:
            return "3"

        builder = StateGraph(Annotated[list, operator.add])
        builder.add_node(Node("1"))
        builder.add_node(Node("1.1"))
        builder.add_node(Node("2"))
        builder.add_node(Node("3"))
        builder.add_node(Node("3.1"))
        builder.add_edge(START, "1")
        builder.add_edge(START, "1.1")
        builder.add_conditional_edges("1", send_for_fun)
        builder.add_conditional_edges("1.1", send_for_profit)
        builder.add_conditional_edges("2", route_to_three)
        graph = builder.compile()
        assert await graph.ainvoke(["0"]) == (
            [
                "0",
                "1",
                "1.1",
                "3.1",
                "2|1",
                "2|2",
                "2|3",
                "2|4",
                "3",
            ]
        )

    asyncio.run(main())


def test_conditional_entrypoint_graph_state() -> None:
    async def main():
        class AgentState(TypedDict, total=False):
            input: str
            output: str
            steps: Annotated[list[str], operator.add]

        async def left(data: AgentState) -> AgentState:
            return {"output": data["input"] + "->left"}

        async def right(data: AgentState) -> AgentState:
            return {"output": data["input"] + "->right"}

        def should_start(data: AgentState) -> str:
            assert data["steps"] == [], "Expected input to be read from the state"
            # Logic to decide where to start
            if len(data["input"]) > 10:
                return "go-right"
            else:
                return "go-left"

        # Define a new graph
        workflow = StateGraph(AgentState)

        workflow.add_node("left", left)
        workflow.add_node("right", right)

        workflow.set_conditional_entry_point(
            should_start, {"go-left": "left", "go-right": "right"}
        )

        workflow.add_conditional_edges("left", lambda data: END)
        workflow.add_edge("right", END)

        app = workflow.compile()

        assert await app.ainvoke({"input": "what is weather in sf"}) == {
            "input": "what is weather in sf",
            "output": "what is weather in sf->right",
            "steps": [],
        }

        assert [c async for c in app.astream({"input": "what is weather in sf"})] == [
            {"right": {"output": "what is weather in sf->right"}},
        ]

    asyncio.run(main())


def test_interrupt_loop(sync_checkpointer: BaseCheckpointSaver) -> None:
    async def main():
        class State(TypedDict):
            age: int
            other: str

        async def ask_age(s: State):
            """Ask an expert for help."""
            question = "How old are you?"
            value = None
            for _ in range(10):
                value: str = interrupt(question)
                if not value.isdigit() or int(value) < 18:
                    question = "invalid response"
                    value = None
                else:
                    break

            return {"age": int(value)}

        builder = StateGraph(State)
        builder.add_node("node", ask_age)
        builder.add_edge(START, "node")

        graph = builder.compile(checkpointer=sync_checkpointer)
        thread1 = {"configurable": {"thread_id": "1"}}

        assert [e async for e in graph.astream({"other": ""}, thread1)] == [
            {
                "__interrupt__": (
                    Interrupt(
                        value="How old are you?",
                        id=AnyStr(),
                    ),
                )
            }
        ]

        assert [
            event
            async for event in graph.astream(
                Command(resume="13"),
                thread1,
            )
        ] == [
            {
                "__interrupt__": (
                    Interrupt(
                        value="invalid response",
                        id=AnyStr(),
                    ),
                )
            }
        ]

        assert [
            event
            async for event in graph.astream(
                Command(resume="15"),
                thread1,
            )
        ] == [
            {
                "__interrupt__": (
                    Interrupt(
                        value="invalid response",
                        id=AnyStr(),
                    ),
                )
            }
        ]

        assert [event async for event in graph.astream(Command(resume="19"), thread1)] == [
            {"node": {"age": 19}},
        ]

    asyncio.run(main())


# ---- the binding's own ----


class Log(TypedDict):
    log: Annotated[list, operator.add]


def _overlapping_pair():
    """Two async nodes of one superstep, each waiting for the other to have started: it
    ends only when both run at once."""
    events: dict = {}

    def ev(name):
        return events.setdefault(name, asyncio.Event())

    async def a(state):
        ev("a").set()
        await asyncio.wait_for(ev("b").wait(), HANG)
        return {"log": ["a"]}

    async def b(state):
        ev("b").set()
        await asyncio.wait_for(ev("a").wait(), HANG)
        return {"log": ["b"]}

    g = StateGraph(Log)
    g.add_node(a)
    g.add_node(b)
    g.add_edge(START, "a")
    g.add_edge(START, "b")
    return g.compile(), events


def test_async_nodes_of_a_superstep_overlap_in_ainvoke():
    app, events = _overlapping_pair()
    assert sorted(asyncio.run(app.ainvoke({"log": []}))["log"]) == ["a", "b"]


def test_async_nodes_of_a_superstep_overlap_in_sync_invoke():
    app, events = _overlapping_pair()
    assert sorted(app.invoke({"log": []})["log"]) == ["a", "b"]
    events.clear()
    assert sorted(app.invoke({"log": []})["log"]) == ["a", "b"]  # the module's loop again


def test_async_nodes_run_on_the_callers_loop():
    seen = []

    async def node(state):
        seen.append(asyncio.get_running_loop())
        return {"log": ["n"]}

    g = StateGraph(Log)
    g.add_node(node)
    g.add_edge(START, "node")
    app = g.compile()

    async def main():
        await app.ainvoke({"log": []})
        chunks = [c async for c in app.astream({"log": []})]
        return asyncio.get_running_loop(), chunks

    loop, chunks = asyncio.run(main())
    assert seen == [loop, loop]
    assert chunks == [{"node": {"log": ["n"]}}]
    app.invoke({"log": []})  # sync: a loop of the module's own, not a closed one
    assert seen[2] is not loop and not seen[2].is_closed()


def test_async_node_error_is_the_same_exception():
    raised = []

    async def boom(state):
        await asyncio.sleep(0)
        e = ValueError("boom")
        raised.append(e)
        raise e

    g = StateGraph(Log)
    g.add_node(boom)
    g.add_edge(START, "boom")
    app = g.compile()
    with pytest.raises(ValueError) as sync_err:
        app.invoke({"log": []})
    assert sync_err.value is raised[0]
    with pytest.raises(ValueError) as async_err:
        asyncio.run(app.ainvoke({"log": []}))
    assert async_err.value is raised[1]


def test_async_node_config_writer_and_interrupt():
    async def node(state, config):
        assert get_config()["configurable"]["thread_id"] == "t"
        get_stream_writer()({"custom": 1})
        answer = interrupt("question")
        return {"log": [answer, config["configurable"]["thread_id"]]}

    g = StateGraph(Log)
    g.add_node(node)
    g.add_edge(START, "node")
    app = g.compile(checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "t"}}

    async def main():
        first = [c async for c in app.astream({"log": []}, cfg, stream_mode=["custom", "updates"])]
        done = await app.ainvoke(Command(resume="yes"), cfg)
        return first, done

    first, done = asyncio.run(main())
    assert first[0] == ("custom", {"custom": 1})
    assert first[-1][0] == "updates" and "__interrupt__" in first[-1][1]
    assert done == {"log": ["yes", "t"]}


def test_async_entrypoint_and_tasks():
    started = {}

    @task
    async def step(i: int) -> int:
        # every task waits for its neighbour to have started: they run at once
        started.setdefault(i, asyncio.Event()).set()
        await asyncio.wait_for(started.setdefault(1 - i, asyncio.Event()).wait(), HANG)
        return i + 10

    @task
    def plain(x: int) -> int:
        return x * 2

    @entrypoint(checkpointer=InMemorySaver())
    async def workflow(n: int) -> list:
        futs = [step(0), step(1)]
        got = await asyncio.gather(*futs)
        return got + [await plain(n)]

    cfg = {"configurable": {"thread_id": "w"}}
    assert workflow.invoke(3, cfg) == [10, 11, 6]
    started.clear()
    assert asyncio.run(workflow.ainvoke(4, {"configurable": {"thread_id": "w2"}})) == [10, 11, 8]


def test_async_task_from_sync_entrypoint():
    @task
    async def add_one(x: int) -> int:
        await asyncio.sleep(0)
        return x + 1

    @entrypoint()
    def workflow(x: int) -> int:
        return add_one(x).result() + add_one(x + 1).result()

    assert workflow.invoke(1) == 5
