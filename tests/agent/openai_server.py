#!/usr/bin/env python3
"""A chat-completions server for the tests, on 127.0.0.1 (our own code).

The model name picks the behaviour: plain, stream, stream-tools, 429-once
(429 with Retry-After: 1, then plain), 500 (always), 401, auth (401 unless
the bearer token is "secret"), slow (answers after 3 s), malformed (a 200
that is not JSON), drop (a stream cut off before its end), echo-params
(echoes temperature, max_tokens and tool_choice), echo-auth and
echo-auth-500 (401 and 500 with an error body quoting the request's
Authorization header verbatim, its decoded Basic credentials and the
request line: a careless endpoint that leaks secrets), agent (a
conversation: two tool calls, add and upper, streamed in fragments, then an
answer built from the tool results), agent-flaky (agent, but every third
request fails with 500). Prints the port on the first line of stdout, then
serves until killed.
"""
import base64
import binascii
import http.server
import json
import sys
import time

counts = {}


def chunk(delta, finish=None):
    return "data: " + json.dumps({"id": "r1", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


def echo_auth(headers, requestline):
    """An error body that quotes the credentials the request carried."""
    auth = headers.get("Authorization") or ""
    body = {"error": {"message": "rejected Authorization: " + auth}}
    if auth.startswith("Basic "):
        try:
            body["error"]["credentials"] = base64.b64decode(auth[6:]).decode("utf-8", "replace")
        except (binascii.Error, ValueError):
            pass
    body["error"]["request"] = requestline
    return json.dumps(body)


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send(self, status, body, ctype="application/json", headers=()):
        data = body.encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        model = req.get("model", "")
        counts[model] = counts.get(model, 0) + 1
        if self.path == "/v1/count":
            return self.send(200, json.dumps({"count": counts.get(req.get("of"), 0)}))
        if model == "401" or (model == "auth" and
                              self.headers.get("Authorization") != "Bearer secret"):
            return self.send(401, json.dumps({"error": {"message": "invalid api key"}}))
        if model in ("echo-auth", "echo-auth-500"):
            return self.send(401 if model == "echo-auth" else 500,
                             echo_auth(self.headers, self.requestline))
        if model == "500":
            return self.send(500, json.dumps({"error": {"message": "the model is overloaded"}}))
        if model == "429-once" and counts[model] == 1:
            return self.send(429, json.dumps({"error": {"message": "slow down"}}),
                             headers=[("Retry-After", "1")])
        if model == "slow":
            time.sleep(3)
        if model == "malformed":
            return self.send(200, "{this is not json")
        if model == "agent-flaky" and counts[model] % 3 == 1:
            return self.send(500, json.dumps({"error": {"message": "flaky"}}))
        last = req["messages"][-1].get("content") or ""
        if model == "echo-params":  # answers with the request parameters it got
            last = json.dumps({k: req[k] for k in ("temperature", "max_tokens", "tool_choice")
                               if k in req}, sort_keys=True)
        if not req.get("stream"):
            return self.send(200, json.dumps({"id": "r0", "choices": [{"index": 0, "message": {
                "role": "assistant", "content": "echo: " + last}, "finish_reason": "stop"}]}))
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Connection", "close")
        self.end_headers()
        parts = [chunk({"role": "assistant", "content": "ec"}), chunk({"content": "ho: " + last})]
        if model in ("agent", "agent-flaky"):
            msgs = req["messages"]
            if msgs[-1].get("role") == "tool":
                results = []
                for m in reversed(msgs):
                    if m.get("role") != "tool":
                        break
                    results.insert(0, m.get("content"))
                parts = [chunk({"role": "assistant", "content": "results: "}),
                         chunk({"content": ", ".join(results)})]
            else:
                parts = [chunk({"role": "assistant", "content": "calling two tools"}),
                         chunk({"tool_calls": [
                             {"index": 0, "id": "a1", "type": "function",
                              "function": {"name": "add", "arguments": "{\"a\":2,"}},
                             {"index": 1, "id": "u1", "type": "function",
                              "function": {"name": "upper", "arguments": "{\"s\":"}}]}),
                         chunk({"tool_calls": [
                             {"index": 0, "function": {"arguments": "\"b\":40}"}},
                             {"index": 1, "function": {"arguments": "\"hi\"}"}}]})]
            model = "stream-tools" if len(parts) == 3 else model
        elif model == "stream-tools":
            parts = [chunk({"role": "assistant", "content": "calling"}),
                     chunk({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                                            "function": {"name": "search", "arguments": ""}}]}),
                     chunk({"tool_calls": [{"index": 0, "function": {"arguments": "{\"q\":"}}]}),
                     chunk({"tool_calls": [{"index": 0, "function": {"arguments": "\"x\"}"}}]})]
        for p in parts:
            # Split every event in two writes so that the client sees partial events.
            self.wfile.write(p[:7].encode())
            self.wfile.flush()
            self.wfile.write(p[7:].encode())
            self.wfile.flush()
        if model == "drop":
            self.close_connection = True
            return
        self.wfile.write(chunk({}, "tool_calls" if model == "stream-tools" else "stop").encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()
        self.close_connection = True


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
