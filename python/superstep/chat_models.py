"""Chat models of superstep's agent layer (docs/agent.md, docs/providers.md), with
LangChain's names: ChatOpenAI (any OpenAI-compatible server), ChatAnthropic
(Anthropic's Messages API), ChatScripted (the scripted offline model: one reply
per line of a JSONL file) and init_chat_model("provider:model").

A model is C (sst_model): its HTTP calls, streaming, retries and message
conversion run without the GIL. `invoke(messages)` makes one call and returns an
AIMessage; `bind_tools(tools)` offers tools; create_react_agent takes the model
itself. An `api_key=` is handed to the C client through an environment variable
of this process (the client reads keys only from the environment; it never logs
them).
"""

from __future__ import annotations

import itertools
import os
import threading
from typing import Any, Dict, List, Optional, Sequence

from . import _core
from .messages import AIMessage, BaseMessage, _from_value, convert_to_messages

_key_ids = itertools.count(1)
_key_lock = threading.Lock()


def _key_env(api_key: Optional[str], default_env: Optional[str]) -> Optional[str]:
    """The environment variable the C client reads the key from."""
    if api_key is None:
        return default_env
    if hasattr(api_key, "get_secret_value"):  # pydantic SecretStr
        api_key = api_key.get_secret_value()
    with _key_lock:
        name = f"SUPERSTEP_PY_API_KEY_{os.getpid()}_{next(_key_ids)}"
    os.environ[name] = str(api_key)
    return name


def _message_dicts(messages: Any) -> List[dict]:
    if isinstance(messages, (str, BaseMessage)):
        messages = [messages]
    return [m._to_dict() for m in convert_to_messages(messages)]


def _tool_schemas(tools: Sequence[Any]) -> List[dict]:
    from .tools import BaseTool, as_tool

    out = []
    for t in tools:
        if isinstance(t, dict):  # already a schema (OpenAI's function tool)
            out.append(t if "function" in t else {"type": "function", "function": t})
        else:
            out.append((t if isinstance(t, BaseTool) else as_tool(t)).tool_call_schema)
    return out


class BaseChatModel(_core.Model):
    """A chat model of the agent layer."""

    provider = ""

    def _call(self, messages: Any, tools: Any = None, response_format: Any = None) -> dict:
        return _core.Model.invoke(self, _message_dicts(messages), tools=tools,
                                  response_format=response_format)

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> AIMessage:
        """One model call: the conversation in (messages, dicts, (role, content) pairs or
        a string), the assistant's reply out, with usage_metadata."""
        return _from_value(self._call(input))

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> "_Bound":
        """The model offering `tools` (tools, functions or OpenAI tool schemas)."""
        return _Bound(self, tools=_tool_schemas(tools))

    def with_structured_output(self, schema: Any, **kwargs: Any) -> "_Bound":
        """The model answering with a dict matching `schema` (a JSON schema, a TypedDict
        or a dataclass): `invoke` returns the dict."""
        return _Bound(self, response_format=_response_format(schema))


class _Bound:
    """A model with tools or a response format bound."""

    def __init__(self, model: BaseChatModel, tools: Any = None,
                 response_format: Any = None) -> None:
        self.model = model
        self.tools = tools
        self.response_format = response_format

    def invoke(self, input: Any, config: Any = None, **kwargs: Any) -> Any:
        reply = self.model._call(input, self.tools, self.response_format)
        if self.response_format is not None:
            return reply.get("structured_response")
        return _from_value(reply)


def _response_format(schema: Any) -> dict:
    """A JSON object schema for structured output, from a schema or a class."""
    from ._schema import class_schema

    if isinstance(schema, dict):
        return schema
    got = class_schema(schema) if isinstance(schema, type) else None
    if got is None:
        raise TypeError(
            f"response_format: expected a JSON schema (dict), a TypedDict or a dataclass, "
            f"got {schema!r}"
        )
    doc = (getattr(schema, "__doc__", None) or "").strip()
    if doc and "description" not in got and not doc.startswith(schema.__name__ + "("):
        got = {**got, "description": doc}
    return got


class ChatOpenAI(BaseChatModel):
    """An OpenAI-compatible chat model: OpenAI, vLLM, llama.cpp, Ollama, LM Studio.
    `base_url` defaults to $OPENAI_BASE_URL, else https://api.openai.com/v1; the key to
    `api_key`, else $OPENAI_API_KEY. Other keyword arguments (temperature, max_tokens,
    top_p, ...) are request members."""

    provider = "openai"

    def __init__(self, model: str = "gpt-4o-mini", *, base_url: Optional[str] = None,
                 api_key: Any = None, model_kwargs: Optional[Dict[str, Any]] = None,
                 **params: Any) -> None:
        params.pop("streaming", None)  # replies are always streamed
        for alias, name in (("model_name", None), ("openai_api_base", "base_url"),
                            ("openai_api_key", "api_key")):
            if alias in params:
                value = params.pop(alias)
                if name == "base_url":
                    base_url = value
                elif name == "api_key":
                    api_key = value
                else:
                    model = value
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or "https://api.openai.com/v1"
        all_params = {k: v for k, v in {**params, **(model_kwargs or {})}.items()
                      if v is not None}
        super().__init__("openai", base_url, model, _key_env(api_key, "OPENAI_API_KEY"),
                         all_params or None)
        self.model_name = model
        self.base_url = base_url


class ChatAnthropic(BaseChatModel):
    """Anthropic's Messages API, natively (tool use, extended thinking, prompt caching:
    `cache_prompt=True`). `base_url` defaults to $ANTHROPIC_BASE_URL, else
    https://api.anthropic.com; the key to `api_key`, else $ANTHROPIC_API_KEY."""

    provider = "anthropic"

    def __init__(self, model: str = "claude-sonnet-4-5", *, base_url: Optional[str] = None,
                 api_key: Any = None, cache_prompt: bool = False,
                 model_kwargs: Optional[Dict[str, Any]] = None, **params: Any) -> None:
        if "model_name" in params:
            model = params.pop("model_name")
        base_url = base_url or params.pop("anthropic_api_url", None) or os.environ.get(
            "ANTHROPIC_BASE_URL")
        all_params = {k: v for k, v in {**params, **(model_kwargs or {})}.items()
                      if v is not None}
        super().__init__("anthropic", base_url, model, _key_env(api_key, "ANTHROPIC_API_KEY"),
                         all_params or None, cache_prompt)
        self.model_name = model
        self.base_url = base_url


class ChatScripted(BaseChatModel):
    """The scripted offline model (tests, examples): one assistant reply per call, in
    order, from a JSONL file of {"content": ..., "tool_calls": [...]} objects. A run
    that asks for more replies than the file has fails."""

    provider = "fake"

    def __init__(self, path: str) -> None:
        super().__init__("fake", os.fspath(path))
        self.path = os.fspath(path)


def init_chat_model(model: str, *, model_provider: Optional[str] = None,
                    base_url: Optional[str] = None, api_key: Any = None,
                    **kwargs: Any) -> BaseChatModel:
    """A model from LangChain's "provider:model" names: "openai:gpt-4o-mini",
    "anthropic:claude-sonnet-4-5", "fake:FILE" (the scripted model), or a model name with
    `model_provider=`."""
    provider, _, name = model.partition(":") if model_provider is None else (
        model_provider, ":", model)
    if not name:
        raise ValueError(f"init_chat_model: name the provider, as 'openai:{model}'")
    if provider == "openai":
        return ChatOpenAI(name, base_url=base_url, api_key=api_key, **kwargs)
    if provider == "anthropic":
        return ChatAnthropic(name, base_url=base_url, api_key=api_key, **kwargs)
    if provider == "fake":
        return ChatScripted(name)
    raise ValueError(f"init_chat_model: unknown provider {provider!r} "
                     f"(openai, anthropic or fake)")


__all__ = ["BaseChatModel", "ChatAnthropic", "ChatOpenAI", "ChatScripted", "init_chat_model"]
