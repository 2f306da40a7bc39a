"""superstep.prebuilt, superstep.chat_models and superstep.tools: create_react_agent over
the agent layer (OpenAI-compatible and Anthropic models served by chat_server.py on
127.0.0.1, and the scripted offline model), its middleware, Python tools, ToolNode and
tools_condition in graphs of one's own. No network.

LangGraph's libs/prebuilt/tests are built on langchain_core's chat models and tools
(not installed here); docs/python.md lists them and why. These are superstep's own.
"""

import json
import threading
from dataclasses import dataclass
from typing import Annotated, Any, List, Literal, Optional, TypedDict

import pytest
from chat_server import ChatServer

from superstep.chat_models import ChatAnthropic, ChatOpenAI, ChatScripted, init_chat_model
from superstep.checkpoint import InMemorySaver
from superstep.graph import END, START, MessagesState, StateGraph
from superstep.messages import AIMessage, HumanMessage, ToolMessage
from superstep.prebuilt import (
    AgentMiddleware,
    HumanInTheLoopMiddleware,
    InjectedState,
    InjectedStore,
    InjectedToolCallId,
    ModelCallLimitMiddleware,
    ModelFallbackMiddleware,
    SummarizationMiddleware,
    ToolCallLimitMiddleware,
    ToolNode,
    create_react_agent,
    tools_condition,
)
from superstep.store import InMemoryStore
from superstep.tools import ToolException, tool
from superstep.types import Command, interrupt


@tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _call(cid: str, tool_name: str, /, **args: Any) -> dict:
    return {"id": cid, "name": tool_name, "args": args}


def _script(tmp_path, replies: List[dict]) -> str:
    """A JSONL file for the scripted model, from replies as chat_server takes them."""
    path = tmp_path / "replies.jsonl"
    with open(path, "w") as f:
        for r in replies:
            line = {"content": r.get("content", "")}
            if r.get("tool_calls"):
                line["tool_calls"] = [
                    {"id": c["id"], "type": "function",
                     "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
                    for c in r["tool_calls"]
                ]
            f.write(json.dumps(line) + "\n")
    return str(path)


# ---- tools from Python functions -------------------------------------------------------


def test_tool_schema_from_signature_and_docstring():
    @tool(parse_docstring=True)
    def search(query: str, limit: int = 5, kind: Literal["web", "news"] = "web",
               tags: Optional[List[str]] = None,
               state: Annotated[dict, InjectedState] = None,
               call_id: Annotated[str, InjectedToolCallId] = "") -> str:
        """Search the web.

        Args:
            query: what to look for
            limit: at most this many results
        """
        return f"{query}:{limit}:{kind}:{tags}:{call_id}"

    assert search.name == "search"
    assert search.description == "Search the web."
    assert search.args_schema == {
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "what to look for"},
            "limit": {"type": "integer", "description": "at most this many results",
                      "default": 5},
            "kind": {"enum": ["web", "news"], "default": "web"},
            "tags": {"anyOf": [{"type": "array", "items": {"type": "string"}},
                               {"type": "null"}], "default": None},
        },
        "required": ["query"],
    }
    assert set(search.injected) == {"state", "call_id"}
    # A tool call gets a ToolMessage answering it, with the injected call id.
    msg = search.invoke({"name": "search", "args": {"query": "q"}, "id": "c9",
                         "type": "tool_call"})
    assert msg == ToolMessage("q:5:web:None:c9", tool_call_id="c9", name="search", id=msg.id)
    assert search.invoke({"query": "x", "limit": 1}) == "x:1:web:None:"
    # Without parse_docstring the whole docstring describes the tool (LangChain's default).
    assert add.description == "Add two integers."
    assert add.tool_call_schema["function"]["parameters"]["required"] == ["a", "b"]

    def total(xs: List[float]) -> float:
        """Sum numbers."""
        return sum(xs)

    named = tool("total_of", total)
    assert (named.name, named.invoke({"xs": [1, 2.5]})) == ("total_of", 3.5)
    assert named.args_schema["properties"]["xs"] == {"type": "array",
                                                     "items": {"type": "number"}}

    with pytest.raises(ValueError, match="must have a docstring"):
        @tool
        def undocumented(x: int) -> int:
            return x

    @tool("renamed", description="Given here.")
    def f(x: int) -> int:
        return x

    assert (f.name, f.description) == ("renamed", "Given here.")


def test_chat_models_call_the_providers():
    for kind in ("openai", "anthropic"):
        replies = [{"content": "Hello there."},
                   {"content": "", "tool_calls": [_call("c1", "add", a=1, b=2)]}]
        with ChatServer(replies) as s:
            if kind == "openai":
                m = ChatOpenAI("gpt-test", base_url=s.base_url, api_key="sk-one",
                               temperature=0.25)
            else:
                m = ChatAnthropic("claude-test", base_url=s.anthropic_url, api_key="sk-two",
                                  max_tokens=100)
            reply = m.invoke([("system", "Be kind."), ("user", "Hi")])
            assert isinstance(reply, AIMessage) and reply.content == "Hello there."
            assert reply.usage_metadata["input_tokens"] == 11
            assert reply.usage_metadata["output_tokens"] == 5
            reply = m.bind_tools([add]).invoke("add 1 and 2")
            assert reply.tool_calls == [{"name": "add", "args": {"a": 1, "b": 2}, "id": "c1",
                                         "type": "tool_call"}]
            first, second = s.requests
            if kind == "openai":
                assert first["model"] == "gpt-test" and first["temperature"] == 0.25
                assert first["messages"][0] == {"role": "system", "content": "Be kind."}
                assert s.headers[0]["authorization"] == "Bearer sk-one"
                assert second["tools"][0]["function"]["name"] == "add"
            else:
                assert first["model"] == "claude-test" and first["max_tokens"] == 100
                assert first["system"] in ("Be kind.", [{"type": "text", "text": "Be kind."}])
                assert s.headers[0]["x-api-key"] == "sk-two"
                assert second["tools"][0]["name"] == "add"
                assert second["tools"][0]["input_schema"]["required"] == ["a", "b"]
    with pytest.raises(ValueError, match="unknown provider"):
        init_chat_model("nope:model")
    with pytest.raises(Exception, match="cannot open"):
        ChatScripted("/nonexistent/replies.jsonl")


# ---- create_react_agent --------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_react_agent_over_http(provider):
    seen_threads = []

    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        seen_threads.append(threading.get_ident())
        return text.upper()

    replies = [
        {"content": "Working.", "tool_calls": [_call("c1", "add", a=2, b=40),
                                               _call("c2", "shout", text="done")]},
        {"content": "2 + 40 = 42, DONE."},
    ]
    with ChatServer(replies) as s:
        model = (ChatOpenAI("gpt-test", base_url=s.base_url, api_key="k")
                 if provider == "openai"
                 else ChatAnthropic("claude-test", base_url=s.anthropic_url, api_key="k"))
        agent = create_react_agent(model, [add, shout], prompt="You add numbers.")
        out = agent.invoke({"messages": [("user", "What is 2 + 40?")]})
        assert list(out) == ["messages"]
        kinds = [(type(m).__name__, m.content) for m in out["messages"]]
        assert kinds == [("HumanMessage", "What is 2 + 40?"), ("AIMessage", "Working."),
                         ("ToolMessage", "42"), ("ToolMessage", "DONE"),
                         ("AIMessage", "2 + 40 = 42, DONE.")]
        assert [m.tool_call_id for m in out["messages"][2:4]] == ["c1", "c2"]
        first, second = s.requests
        if provider == "openai":
            assert first["messages"][0] == {"role": "system", "content": "You add numbers."}
            assert {t["function"]["name"] for t in first["tools"]} == {"add", "shout"}
            assert [m["role"] for m in second["messages"]] == [
                "system", "user", "assistant", "tool", "tool"]
        else:
            assert "You add numbers." in json.dumps(first["system"])
            assert {t["name"] for t in first["tools"]} == {"add", "shout"}
    assert len(seen_threads) == 1


def test_react_agent_tools_run_in_parallel(tmp_path):
    # Both calls must be inside their tool at once to pass the barrier: they run on two
    # of the engine's workers, each holding the GIL only while it runs Python.
    barrier = threading.Barrier(2, timeout=60)

    @tool
    def meet(who: str) -> str:
        """Wait for the other call."""
        barrier.wait()
        return f"met {who}"

    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("a", "meet", who="a"), _call("b", "meet", who="b")]},
        {"content": "Both met."},
    ]))
    out = create_react_agent(model, [meet]).invoke({"messages": [("user", "go")]})
    assert [m.content for m in out["messages"][2:]] == ["met a", "met b", "Both met."]


def test_react_agent_tool_errors_are_read_by_the_model(tmp_path):
    @tool
    def divide(a: float, b: float) -> float:
        """Divide a by b."""
        return a / b

    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "divide", a=1, b=0),
                                       _call("c2", "nope"),
                                       _call("c3", "divide", a="x")]},
        {"content": "Cannot divide by zero."},
    ]))
    out = create_react_agent(model, [divide]).invoke({"messages": [("user", "1/0")]})
    results = [m.content for m in out["messages"] if isinstance(m, ToolMessage)]
    assert results[0] == "error: tool 'divide' failed: ZeroDivisionError('division by zero')"
    assert results[1].startswith("error: ") and "nope" in results[1]
    assert results[2].startswith("error: ")  # arguments checked against the schema
    assert out["messages"][-1].content == "Cannot divide by zero."


def test_react_agent_checkpoints_and_interrupts_before_tools(tmp_path):
    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "add", a=1, b=1)]},
        {"content": "Two."},
        {"content": "Still two."},
    ]))
    agent = create_react_agent(model, [add], checkpointer=InMemorySaver(),
                               interrupt_before=["tools"])
    cfg = {"configurable": {"thread_id": "t1"}}
    out = agent.invoke({"messages": [("user", "1+1")]}, cfg)
    assert [type(m).__name__ for m in out["messages"]] == ["HumanMessage", "AIMessage"]
    state = agent.get_state(cfg)
    assert state.next == ("tool",)
    out = agent.invoke(None, cfg)
    assert [m.content for m in out["messages"][-2:]] == ["2", "Two."]
    # The thread goes on with the next question.
    out = agent.invoke({"messages": [HumanMessage("and now?")]}, cfg)
    assert [m.content for m in out["messages"]][-2:] == ["and now?", "Still two."]
    assert len(list(agent.get_state_history(cfg))) > 3
    # Streamed updates are the nodes' (the agent's own names), with the public fields.
    agent = create_react_agent(ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "add", a=1, b=1)]}, {"content": "Two."}])),
        [add])
    chunks = list(agent.stream({"messages": [("user", "1+1")]}, stream_mode="updates"))
    assert [list(c) for c in chunks] == [["llm_call"], ["tool"], ["llm_call"]]
    assert [list(c.values())[0]["messages"][-1].content for c in chunks] == ["", "2", "Two."]
    assert all(set(list(c.values())[0]) == {"messages"} for c in chunks)


class Contact(TypedDict):
    """A person to reach."""

    name: str
    age: int


def test_react_agent_structured_output(tmp_path):
    # The scripted model answers through the tool strategy: the schema is a tool named
    # after its title; a wrong answer is sent back, the right one kept.
    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("s1", "Contact", name="Ada", age="old")]},
        {"content": "", "tool_calls": [_call("s2", "Contact", name="Ada", age=36)]},
    ]))
    out = create_react_agent(model, [], response_format=Contact).invoke(
        {"messages": [("user", "Who?")]})
    assert out["structured_response"] == {"name": "Ada", "age": 36}
    assert "does not match the schema" in out["messages"][2].content
    # OpenAI-compatible models answer in the reply's text (response_format json_schema).
    with ChatServer([{"content": json.dumps({"name": "Bo", "age": 7})}]) as s:
        agent = create_react_agent(ChatOpenAI("m", base_url=s.base_url), [add],
                                   response_format=Contact)
        out = agent.invoke({"messages": [("user", "Who?")]})
        assert out["structured_response"] == {"name": "Bo", "age": 7}
        rf = s.requests[0]["response_format"]
        assert rf["type"] == "json_schema" and rf["json_schema"]["name"] == "Contact"

    @dataclass
    class Point:
        x: int
        y: int = 0

    with pytest.raises(TypeError, match="response_format"):
        create_react_agent(model, [], response_format=42)
    assert create_react_agent(model, [], response_format=Point) is not None


def test_react_agent_bad_arguments(tmp_path):
    model = ChatScripted(_script(tmp_path, []))
    with pytest.raises(TypeError, match="chat model"):
        create_react_agent(object(), [])
    with pytest.raises(NotImplementedError, match="prompt"):
        create_react_agent(model, [], prompt=lambda s: s)

    @tool
    def with_state(x: int, state: Annotated[dict, InjectedState]) -> int:
        """Needs the state."""
        return x

    with pytest.raises(NotImplementedError, match="ToolNode"):
        create_react_agent(model, [with_state])
    with pytest.raises(NotImplementedError, match="state_schema"):
        create_react_agent(model, [], state_schema=MessagesState)
    # The scripted model out of replies fails the run, naming why.
    with pytest.raises(Exception, match="repl"):
        create_react_agent(model, [add]).invoke({"messages": [("user", "hi")]})


# ---- middleware ----------------------------------------------------------------------


def test_human_in_the_loop_middleware(tmp_path):
    ran = []

    @tool
    def send_email(to: str) -> str:
        """Send an email."""
        ran.append(to)
        return f"sent to {to}"

    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "send_email", to="ann@example.com")]},
        {"content": "Sent."},
    ]))
    agent = create_react_agent(
        model, [send_email], checkpointer=InMemorySaver(),
        middleware=[HumanInTheLoopMiddleware(interrupt_on={
            "send_email": {"allowed_decisions": ["approve", "edit", "reject"]}})])
    cfg = {"configurable": {"thread_id": "h"}}
    out = agent.invoke({"messages": [("user", "mail ann")]}, cfg)
    (intr,) = out["__interrupt__"]
    assert intr.value["action_requests"][0]["name"] == "send_email"
    assert intr.value["action_requests"][0]["args"] == {"to": "ann@example.com"}
    assert ran == []
    out = agent.invoke(Command(resume={"decisions": [
        {"type": "edit", "edited_action": {"name": "send_email",
                                           "args": {"to": "bob@example.com"}}}]}), cfg)
    assert ran == ["bob@example.com"]
    assert out["messages"][-1].content == "Sent."
    with pytest.raises(ValueError, match="human in the loop: tool 'x'"):
        HumanInTheLoopMiddleware(interrupt_on={"x": 5})


def test_call_limit_middleware(tmp_path):
    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "add", a=1, b=1)]},
        {"content": "", "tool_calls": [_call("c2", "add", a=2, b=2),
                                       _call("c3", "add", a=3, b=3)]},
        {"content": "done"},
    ]))
    agent = create_react_agent(model, [add], middleware=[
        ToolCallLimitMiddleware(tool_name="add", run_limit=2),
        ModelCallLimitMiddleware(run_limit=3)])
    out = agent.invoke({"messages": [("user", "add")]})
    # c3 is over the limit: answered with an error (before c2 runs), the others run.
    results = {m.tool_call_id: m.content for m in out["messages"] if isinstance(m, ToolMessage)}
    assert results["c1"] == "2" and results["c2"] == "4"
    assert results["c3"].startswith("error: tool call limit exceeded (run limit (2/2))")
    assert out["messages"][-1].content == "done"
    assert out["run_model_call_count"] == 3

    limited = create_react_agent(ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "add", a=1, b=1)]}])), [add],
        middleware=[ModelCallLimitMiddleware(run_limit=1)])
    out = limited.invoke({"messages": [("user", "add")]})
    assert "Model call limits exceeded" in out["messages"][-1].content
    with pytest.raises(ValueError, match="exit_behavior"):
        ModelCallLimitMiddleware(run_limit=1, exit_behavior="later")


def test_model_fallback_and_summarization_middleware(tmp_path):
    # The first model's server has no reply (500, transient): after its retries the call
    # goes to the fallback.
    with ChatServer([]) as down, ChatServer([{"content": "From the fallback."}]) as up:
        primary = ChatOpenAI("a", base_url=down.base_url)
        agent = create_react_agent(primary, [], middleware=[
            ModelFallbackMiddleware(ChatOpenAI("b", base_url=up.base_url), retries=0)])
        out = agent.invoke({"messages": [("user", "hi")]})
        assert out["messages"][-1].content == "From the fallback."
        assert len(down.requests) >= 1 and len(up.requests) == 1
    # Past the trigger the older messages are summarized by the middleware's model.
    summarizer = ChatScripted(_script(tmp_path / "..", [{"content": "They talked."}]))
    model = ChatScripted(_script(tmp_path, [{"content": "Answer."}]))
    agent = create_react_agent(model, [], middleware=[
        SummarizationMiddleware(summarizer, trigger=("tokens", 10), keep=("messages", 1))])
    out = agent.invoke({"messages": [("user", "x" * 100), ("assistant", "y" * 100),
                                     ("user", "last")]})
    texts = [m.content for m in out["messages"]]
    assert any("They talked." in t for t in texts)
    assert texts[-2:] == ["last", "Answer."]
    assert not any(t == "x" * 100 for t in texts)


def test_middleware_written_in_python(tmp_path):
    seen = []

    class Guard(AgentMiddleware):
        def __init__(self, limit: int) -> None:
            self.limit = limit
            super().__init__()

        def before_agent(self, state):
            answer = interrupt("may I start?")  # a hook is a node: it may interrupt
            return {"messages": [HumanMessage(f"approved: {answer}")]}

        def before_model(self, state):
            seen.append(len(state["messages"]))
            if len(state["messages"]) > self.limit:
                return {"jump_to": "end"}
            return None

        def after_model(self, state, runtime):
            seen.append(type(state["messages"][-1]).__name__)

    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "add", a=1, b=1)]},
        {"content": "never asked"},
    ]))
    agent = create_react_agent(model, [add], middleware=[Guard(3)],
                               checkpointer=InMemorySaver())
    cfg = {"configurable": {"thread_id": "g"}}
    out = agent.invoke({"messages": [("user", "1+1")]}, cfg)
    assert out["__interrupt__"][0].value == "may I start?"
    out = agent.invoke(Command(resume="yes"), cfg)
    assert [m.content for m in out["messages"]] == ["1+1", "approved: yes", "", "2"]
    assert seen == [2, "AIMessage", 4]
    assert "Guard.before_model" in agent.get_graph().draw_mermaid()

    class Bad(AgentMiddleware):
        def before_model(self, state):
            return {"jump_to": "nowhere"}

    class Raises(AgentMiddleware):
        name = "raises"

        def after_model(self, state):
            raise KeyError("from the hook")

    with pytest.raises(ValueError, match="jump_to must be"):
        create_react_agent(model, [add], middleware=[Bad()]).invoke({"messages": [("user", "x")]})
    with pytest.raises(KeyError, match="from the hook"):
        create_react_agent(ChatScripted(_script(tmp_path, [{"content": "hi"}])), [],
                           middleware=[Raises()]).invoke({"messages": [("user", "x")]})

    class Empty(AgentMiddleware):
        pass

    with pytest.raises(ValueError, match="define a hook"):
        Empty()



def test_wrap_hooks_written_in_python(tmp_path):
    class Wraps(AgentMiddleware):
        def __init__(self) -> None:
            self.calls = []
            super().__init__()

        def wrap_model_call(self, request, handler):
            request = request.override(system_prompt="Changed.")
            reply = handler(request)
            if reply.content == "bad":  # ask again: the handler may be called twice
                reply = handler(request)
            return reply

        def wrap_tool_call(self, request, handler):
            self.calls.append(request.tool_call["name"])
            if request.tool_call["name"] == "blocked":
                return ToolMessage("not allowed", tool_call_id=request.tool_call["id"])
            call = dict(request.tool_call, args={**request.tool_call["args"], "a": 10})
            msg = handler(request.override(tool_call=call))
            return ToolMessage(msg.content + "!", tool_call_id=msg.tool_call_id, name=msg.name)

    @tool
    def blocked() -> str:
        """Never runs."""
        raise AssertionError("ran")

    replies = [{"content": "bad"},
               {"content": "", "tool_calls": [_call("c1", "add", a=1, b=2),
                                              _call("c2", "blocked")]},
               {"content": "good"}]
    with ChatServer(replies) as s:
        mw = Wraps()
        agent = create_react_agent(ChatOpenAI("m", base_url=s.base_url), [add, blocked],
                                   prompt="Original.", middleware=[mw])
        out = agent.invoke({"messages": [("user", "go")]})
        assert [m.content for m in out["messages"][2:]] == ["12!", "not allowed", "good"]
        assert sorted(mw.calls) == ["add", "blocked"]  # the two calls run in parallel
        assert len(s.requests) == 3
        assert all(r["messages"][0] == {"role": "system", "content": "Changed."}
                   for r in s.requests)

    class Fails(AgentMiddleware):
        def wrap_tool_call(self, request, handler):
            raise LookupError("from the wrapper")

    model = ChatScripted(_script(tmp_path, [
        {"content": "", "tool_calls": [_call("c1", "add", a=1, b=2)]}]))
    with pytest.raises(LookupError, match="from the wrapper"):
        create_react_agent(model, [add], middleware=[Fails()]).invoke(
            {"messages": [("user", "x")]})


# ---- ToolNode and tools_condition ----------------------------------------------------


def test_tool_node_runs_tool_calls_with_injection():
    store = InMemoryStore()
    store.put(("prefs",), "ann", {"color": "teal"})

    @tool
    def favourite(user: str, st: Annotated[Any, InjectedStore()]) -> str:
        """The user's favourite colour."""
        return st.get(("prefs",), user).value["color"]

    @tool
    def whoami(state: Annotated[dict, InjectedState("user")],
               call_id: Annotated[str, InjectedToolCallId]) -> str:
        """The current user."""
        return f"{state} ({call_id})"

    @tool
    def fails(x: int) -> int:
        """Always fails."""
        raise ToolException("nope")

    @tool
    def goto_end(call_id: Annotated[str, InjectedToolCallId]) -> Command:
        """Ends the run with a message."""
        return Command(update={"messages": [ToolMessage("bye", tool_call_id=call_id)],
                               "user": "gone"})

    class State(MessagesState):
        user: str

    calls = iter([
        [_call("c1", "favourite", user="ann"), _call("c2", "whoami"),
         _call("c3", "fails", x=1), _call("c4", "missing")],
        [_call("c5", "goto_end")],
        [],
    ])

    def model(state: State):
        tcs = [{**c, "type": "tool_call"} for c in next(calls)]
        return {"messages": [AIMessage("", tool_calls=tcs)]}

    g = StateGraph(State)
    g.add_node("model", model)
    g.add_node("tools", ToolNode([favourite, whoami, fails, goto_end], handle_tool_errors=True))
    g.add_edge(START, "model")
    g.add_conditional_edges("model", tools_condition)
    g.add_edge("tools", "model")
    app = g.compile(store=store)
    out = app.invoke({"messages": [HumanMessage("hi")], "user": "ann"})
    tool_msgs = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert [m.content for m in tool_msgs[:2]] == ["teal", "ann (c2)"]
    assert tool_msgs[2].status == "error" and "nope" in tool_msgs[2].content
    assert tool_msgs[3].content.startswith("Error: missing is not a valid tool")
    assert tool_msgs[4].content == "bye" and out["user"] == "gone"
    assert isinstance(out["messages"][-1], AIMessage)

    # Directly, with a list of messages; errors raised when not handled.
    node = ToolNode([fails], handle_tool_errors=False)
    ai = AIMessage("", tool_calls=[{**_call("x", "fails", x=1), "type": "tool_call"}])
    with pytest.raises(ToolException):
        node.invoke([ai])
    node = ToolNode([add])
    ai = AIMessage("", tool_calls=[{**_call("y", "add", a=1, b=2), "type": "tool_call"}])
    assert node.invoke([ai])[0].content == "3"
    assert tools_condition([ai]) == "tools"
    assert tools_condition({"messages": [AIMessage("done")]}) == END
