"""A scripted chat server for the prebuilt tests, on 127.0.0.1 (our own code): it
answers OpenAI's POST /v1/chat/completions and Anthropic's POST /v1/messages, both
streamed (SSE) as the providers stream, with the replies a test gives it in order,
and keeps every request it got.

A reply is {"content": str, "tool_calls": [{"id", "name", "args"}]}; with no reply
left the server answers 500.
"""

from __future__ import annotations

import http.server
import json
import threading
from typing import Any, Dict, List


def _openai_events(reply: Dict[str, Any]) -> List[str]:
    def chunk(delta: dict, finish: Any = None) -> str:
        return "data: " + json.dumps({"id": "r1", "object": "chat.completion.chunk",
                                      "choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": finish}]}) + "\n\n"

    out = [chunk({"role": "assistant", "content": ""})]
    text = reply.get("content") or ""
    for i in range(0, len(text), 7):  # in fragments, as a real stream
        out.append(chunk({"content": text[i:i + 7]}))
    calls = reply.get("tool_calls") or []
    for i, c in enumerate(calls):
        args = json.dumps(c.get("args") or {})
        out.append(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                          "function": {"name": c["name"], "arguments": ""}}]}))
        half = len(args) // 2
        for part in (args[:half], args[half:]):
            out.append(chunk({"tool_calls": [{"index": i, "function": {"arguments": part}}]}))
    out.append(chunk({}, "tool_calls" if calls else "stop"))
    out.append("data: " + json.dumps({"id": "r1", "choices": [], "usage": {
        "prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16}}) + "\n\n")
    out.append("data: [DONE]\n\n")
    return out


def _anthropic_events(reply: Dict[str, Any]) -> List[str]:
    def ev(kind: str, data: dict) -> str:
        return f"event: {kind}\ndata: {json.dumps({'type': kind, **data})}\n\n"

    out = [ev("message_start", {"message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": "scripted",
        "content": [], "stop_reason": None,
        "usage": {"input_tokens": 11, "output_tokens": 1}}})]
    idx = 0
    text = reply.get("content") or ""
    if text:
        out.append(ev("content_block_start", {"index": idx,
                                              "content_block": {"type": "text", "text": ""}}))
        for i in range(0, len(text), 7):
            out.append(ev("content_block_delta", {
                "index": idx, "delta": {"type": "text_delta", "text": text[i:i + 7]}}))
        out.append(ev("content_block_stop", {"index": idx}))
        idx += 1
    calls = reply.get("tool_calls") or []
    for c in calls:
        out.append(ev("content_block_start", {"index": idx, "content_block": {
            "type": "tool_use", "id": c["id"], "name": c["name"], "input": {}}}))
        args = json.dumps(c.get("args") or {})
        half = len(args) // 2
        for part in (args[:half], args[half:]):
            out.append(ev("content_block_delta", {
                "index": idx, "delta": {"type": "input_json_delta", "partial_json": part}}))
        out.append(ev("content_block_stop", {"index": idx}))
        idx += 1
    out.append(ev("message_delta", {"delta": {"stop_reason": "tool_use" if calls else
                                              "end_turn"}, "usage": {"output_tokens": 5}}))
    out.append(ev("message_stop", {}))
    return out


class ChatServer:
    """`with ChatServer(replies) as s:` serves on s.base_url (OpenAI's, ending in /v1) and
    s.anthropic_url; s.requests holds the request bodies, in order."""

    def __init__(self, replies: List[Dict[str, Any]]) -> None:
        self.replies = list(replies)
        self.requests: List[Dict[str, Any]] = []
        self.headers: List[Dict[str, str]] = []
        self.lock = threading.Lock()
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                with server.lock:
                    server.requests.append(body)
                    server.headers.append({k.lower(): v for k, v in self.headers.items()})
                    reply = server.replies.pop(0) if server.replies else None
                if reply is None:
                    data = b'{"error": {"message": "no reply left"}}'
                    self.send_response(500)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                events = (_anthropic_events(reply) if self.path.endswith("/messages")
                          else _openai_events(reply))
                data = "".join(events).encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        port = self.httpd.server_address[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        self.anthropic_url = f"http://127.0.0.1:{port}"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> "ChatServer":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()
