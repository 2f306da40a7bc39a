#!/usr/bin/env python3
"""Replays recorded model replies for the tests, on 127.0.0.1 (our own code).

Usage: replay_server.py [DIR]   (default: tests/data/llm beside this file)

A POST's JSON body names a "model"; up to an optional "#tag" (a tag gives a
fresh request counter) the model names the scenario, and the n-th request for
a model is answered with the recording DIR/SCENARIO.N.http, else the highest
DIR/SCENARIO.K.http with K < N (the last one repeats), else DIR/SCENARIO.http.
A recording is an HTTP response as text: a status line ("HTTP/1.1 429 Too
Many Requests"), header lines, a blank line and the body. The body is sent as
it is, except that {{header:NAME}} becomes the value of the request's header
NAME (an endpoint that quotes what it was sent). An event stream
(Content-Type: text/event-stream) goes out in small writes and the connection
closes after it, so a recording that stops early is a stream cut off; any
other body goes out with its Content-Length.

POST /_replay/last {"of": MODEL} answers {"count": requests so far, "path",
"headers": {lowercased name: value}, "body": the request's JSON} for the last
request for MODEL ({"count": 0} when there was none), so that tests can check
what the client sent. Prints the port on the first line of stdout, then
serves until killed.
"""
import http.server
import json
import os
import re
import sys
import threading

DIR = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
    os.path.dirname(os.path.abspath(__file__)), "..", "data", "llm")
SAFE = re.compile(r"^[A-Za-z0-9._-]+$")

lock = threading.Lock()
last = {}  # model -> {"count", "path", "headers", "body"}


def recording(scenario, n):
    """The path of the recording that answers the n-th request of a scenario, or None."""
    best, best_k = None, 0
    prefix = scenario + "."
    for name in os.listdir(DIR):
        m = re.fullmatch(re.escape(prefix) + r"(\d+)\.http", name)
        if m and best_k < int(m.group(1)) <= n:
            best, best_k = name, int(m.group(1))
    if best is None and os.path.exists(os.path.join(DIR, scenario + ".http")):
        best = scenario + ".http"
    return os.path.join(DIR, best) if best else None


def parse(path):
    """(status, reason, [(name, value)], body bytes) of a recording."""
    with open(path, "rb") as f:
        text = f.read()
    head, sep, body = text.partition(b"\n\n")
    if not sep:
        raise ValueError(path + ": no blank line after the headers")
    lines = head.decode("utf-8").split("\n")
    _, status, reason = (lines[0].rstrip("\r").split(" ", 2) + [""])[:3]
    headers = []
    for line in lines[1:]:
        name, _, value = line.rstrip("\r").partition(":")
        headers.append((name.strip(), value.strip()))
    return int(status), reason, headers, body


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # the body's writes go out as they are made

    def log_message(self, *args):
        pass

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        n = int(self.headers.get("Content-Length", "0"))
        raw = self.rfile.read(n)
        try:
            req = json.loads(raw or b"{}")
        except ValueError:
            return self.reply(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "the body is not JSON"}})
        if self.path == "/_replay/last":
            with lock:
                return self.reply(200, last.get(req.get("of"), {"count": 0}))
        model = req.get("model") if isinstance(req, dict) else None
        scenario = model.split("#")[0] if isinstance(model, str) else ""
        if not SAFE.match(scenario):
            return self.reply(400, {"type": "error", "error": {
                "type": "invalid_request_error", "message": "model: not a scenario name"}})
        with lock:
            seen = last.get(model, {"count": 0})["count"] + 1
            last[model] = {"count": seen, "path": self.path,
                           "headers": {k.lower(): v for k, v in self.headers.items()},
                           "body": req}
        path = recording(scenario, seen)
        if path is None:
            return self.reply(404, {"type": "error", "error": {
                "type": "not_found_error", "message": "no recording for model " + scenario}})
        status, reason, headers, body = parse(path)
        body = re.sub(rb"\{\{header:([A-Za-z0-9-]+)\}\}",
                      lambda m: (self.headers.get(m.group(1).decode()) or "").encode(), body)
        stream = any(k.lower() == "content-type" and v.startswith("text/event-stream")
                     for k, v in headers)
        self.send_response(status, reason)
        for k, v in headers:
            if k.lower() not in ("content-length", "connection", "transfer-encoding"):
                self.send_header(k, v)
        if not stream:
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)
            return
        self.send_header("Connection", "close")
        self.end_headers()
        # Small writes, so that the client sees events cut at every kind of place.
        for i in range(0, len(body), 61):
            self.wfile.write(body[i:i + 61])
            self.wfile.flush()
        self.close_connection = True


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        # A client that stopped reading (an error event it acted on, a timeout) is expected.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
