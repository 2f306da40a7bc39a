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
request fails with 500), hold (answers only once the test releases it, or
after 120 s). Prints the port on the first line of stdout, then serves
until killed.

POST /v1/hold {"release": bool} answers {"received": n, "sent": n}: how many
"hold" requests came in and how many got their reply, as they were before
this request; with "release": true, held replies (now and later) go out.

POST /v1/embeddings answers {"data": [{"index": i, "embedding": [...]}]}
with deterministic vectors: the FNV-1a 32 hash of a text's UTF-8 bytes seeds
mulberry32, whose draws in [-1, 1) are normalised to unit length
(embedding() below; docs/embeddings.md), of "dimensions" floats, or 8 when
the request sends none. The model name, up to an optional "#tag" (a tag
gives a fresh counter for the "-once" models), picks the behaviour: embed,
embed-500-once and embed-429-once (a 500, or a 429 with Retry-After: 1, then
embed), embed-500 (always), embed-400-second (400 on its second request),
embed-malformed (a 200 that is not JSON), embed-wrong-count (one embedding
short), embed-wrong-dims (one float too many), embed-shuffled (data in
reverse order, indices kept), embed-no-index (no "index" members),
embed-dup-index (index 0 twice), embed-slow (answers after 3 s),
embed-echo-auth (401 quoting the credentials, as echo-auth). POST
/v1/embeddings/stats {"of": MODEL} answers {"requests": n, "sizes": [texts
per request], "dimensions": [the "dimensions" each sent, or null]}.
"""
import base64
import binascii
import http.server
import json
import sys
import threading
import time

counts = {}
embed_stats = {}  # model -> {"requests", "sizes", "dimensions"}
embed_lock = threading.Lock()
hold = {"received": 0, "sent": 0}
hold_lock = threading.Lock()
hold_released = threading.Event()


def chunk(delta, finish=None):
    return "data: " + json.dumps({"id": "r1", "choices": [
        {"index": 0, "delta": delta, "finish_reason": finish}]}) + "\n\n"


def embedding(text, dims):
    """FNV-1a 32 of the UTF-8 bytes seeds mulberry32; dims draws in [-1, 1), normalised."""
    h = 0x811C9DC5
    for b in text.encode("utf-8"):
        h = ((h ^ b) * 0x01000193) & 0xFFFFFFFF
    a = h
    v = []
    for _ in range(dims):
        a = (a + 0x6D2B79F5) & 0xFFFFFFFF
        t = ((a ^ (a >> 15)) * (1 | a)) & 0xFFFFFFFF
        t = ((t + (((t ^ (t >> 7)) * (61 | t)) & 0xFFFFFFFF)) & 0xFFFFFFFF) ^ t
        v.append(((t ^ (t >> 14)) & 0xFFFFFFFF) / 4294967296.0 * 2.0 - 1.0)
    norm = sum(x * x for x in v) ** 0.5 or 1.0
    return [x / norm for x in v]


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
    # Headers and body go out in two writes: with Nagle's algorithm the body
    # would wait for the client's delayed ACK (40 ms a request on Linux).
    disable_nagle_algorithm = True

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

    def embeddings(self, req, model):
        texts = req.get("input")
        dims = req.get("dimensions")
        with embed_lock:
            st = embed_stats.setdefault(model, {"requests": 0, "sizes": [], "dimensions": []})
            st["requests"] += 1
            st["sizes"].append(len(texts) if isinstance(texts, list) else None)
            st["dimensions"].append(dims)
            nth = st["requests"]
        kind = model.split("#")[0]
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            return self.send(400, json.dumps({"error": {"message": "input must be a list of strings"}}))
        if kind == "embed-echo-auth":
            return self.send(401, echo_auth(self.headers, self.requestline))
        if kind == "embed-500" or (kind == "embed-500-once" and nth == 1):
            return self.send(500, json.dumps({"error": {"message": "the embedder is overloaded"}}))
        if kind == "embed-429-once" and nth == 1:
            return self.send(429, json.dumps({"error": {"message": "slow down"}}),
                             headers=[("Retry-After", "1")])
        if kind == "embed-400-second" and nth == 2:
            return self.send(400, json.dumps({"error": {"message": "input too long"}}))
        if kind == "embed-slow":
            time.sleep(3)
        if kind == "embed-malformed":
            return self.send(200, '{"data": [{"index": 0, "embedding": [0.5,')
        size = dims if isinstance(dims, int) and dims > 0 else 8
        data = [{"object": "embedding", "index": i,
                 "embedding": embedding(t, size + (1 if kind == "embed-wrong-dims" else 0))}
                for i, t in enumerate(texts)]
        if kind == "embed-wrong-count":
            data = data[:-1]
        elif kind == "embed-shuffled":
            data.reverse()
        elif kind == "embed-no-index":
            for d in data:
                del d["index"]
        elif kind == "embed-dup-index" and len(data) > 1:
            data[1]["index"] = 0
        return self.send(200, json.dumps({"object": "list", "data": data, "model": model,
                                          "usage": {"prompt_tokens": 0, "total_tokens": 0}}))

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        req = json.loads(self.rfile.read(n) or b"{}")
        model = req.get("model", "")
        counts[model] = counts.get(model, 0) + 1
        if self.path == "/v1/count":
            return self.send(200, json.dumps({"count": counts.get(req.get("of"), 0)}))
        if self.path == "/v1/embeddings/stats":
            with embed_lock:
                st = embed_stats.get(req.get("of"), {"requests": 0, "sizes": [], "dimensions": []})
                return self.send(200, json.dumps(st))
        if self.path == "/v1/embeddings":
            return self.embeddings(req, model)
        if self.path == "/v1/hold":
            with hold_lock:
                seen = dict(hold)
            if req.get("release"):
                hold_released.set()
            return self.send(200, json.dumps(seen))
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
        if model == "hold":
            with hold_lock:
                hold["received"] += 1
            hold_released.wait(120)
            with hold_lock:  # counted before the reply goes out: the client may be gone
                hold["sent"] += 1
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


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that stopped reading (a timeout, a reply too large) is expected here.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
