"""`python3 -m superstep serve CONFIG [options]`: superstep's server with Python graphs.

The C server (docs/server.md) runs inside this interpreter. A langgraph.json
names Python graphs as LangGraph's does, next to Lua scripts:

    {"graphs": {"agent": "./agent.py:graph", "chain": "./chain.lua"},
     "dependencies": ["."], "env": ".env"}

`./agent.py:graph` is a compiled graph, a StateGraph (compiled here), or a
function returning either (called once, at start, with no argument or with a
config dict if it takes one; an `async def` one is run to completion). The
options are `superstep serve`'s; `superstep serve` runs this command itself
when a config names a Python graph (docs/python.md, "Serving").
"""

import argparse
import asyncio
import importlib.util
import inspect
import json
import os
import select
import signal
import sys
from typing import Any, Dict, List, Optional, Tuple

from . import _core

_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def _bytes(text: str) -> int:
    t = text.strip().upper().rstrip("B")
    unit = t[-1:] if t[-1:] in ("K", "M", "G") else ""
    num = t[: len(t) - len(unit)]
    if not num.isdigit() or int(num) == 0:
        raise argparse.ArgumentTypeError(
            f"expected a number of bytes (K, M, G allowed), got '{text}'")
    return int(num) * _UNITS[unit]


def _number(lo: int, hi: int):
    def parse(text: str) -> int:
        if not text.isdigit() or not lo <= int(text) <= hi:
            raise argparse.ArgumentTypeError(f"expected a number from {lo} to {hi}, got '{text}'")
        return int(text)
    return parse


def _parser(command: str) -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog=f"python3 -m superstep {command}",
        description="superstep's server (LangGraph's HTTP API) over Lua and Python graphs.")
    p.add_argument("config", nargs="?", help="a langgraph.json-shaped file")
    p.add_argument("--graph", action="append", default=[], metavar="NAME=SPEC",
                   help="a graph: NAME=script.lua or NAME=file.py:attr")
    p.add_argument("--db", help="SQLite file or postgresql:// URL (default $SUPERSTEP_DB, "
                   "else superstep.db)")
    p.add_argument("--workers", type=_number(0, 256), default=2)
    p.add_argument("--lease", type=_number(1, 86400), default=0)
    p.add_argument("--quiet", action="store_true")
    if command == "serve":
        p.add_argument("--host", default="127.0.0.1")
        p.add_argument("--port", type=_number(0, 65535), default=2024)
        p.add_argument("--auth-token-env", metavar="VAR")
        p.add_argument("--insecure-listen-any", action="store_true")
        p.add_argument("--shared-db", action="store_true")
        p.add_argument("--max-body", type=_bytes, default=0)
        p.add_argument("--max-connections", type=_number(1, 1000000), default=0)
        p.add_argument("--timeout", type=_number(1, 86400), default=0)
        p.add_argument("--stream-backlog", type=_number(1, 100000000), default=0)
        p.add_argument("--runs-per-thread", type=_number(1, 1000000), default=0)
        p.add_argument("--http-threads", type=_number(1, 256), default=0)
        p.add_argument("--open", action="store_true")
        p.add_argument("--no-web", action="store_true")
        p.add_argument("--web-dir")
    p.add_argument("--otlp-endpoint", help=argparse.SUPPRESS)
    p.add_argument("--trace-content", action="store_true", help=argparse.SUPPRESS)
    return p


# ---- loading Python graphs -------------------------------------------------

_modules: Dict[str, Any] = {}


def _module(path: str) -> Any:
    """The module of a graph file, loaded once (its folder first on sys.path)."""
    real = os.path.realpath(path)
    if real in _modules:
        return _modules[real]
    if not os.path.isfile(real):
        raise FileNotFoundError(f"no such file: {path}")
    folder = os.path.dirname(real)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    name = os.path.splitext(os.path.basename(real))[0]
    if name in sys.modules:  # two graph files of one name, or a name taken by a package
        name = f"superstep_graph_{len(_modules)}_{name}"
    spec = importlib.util.spec_from_file_location(name, real)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    try:
        spec.loader.exec_module(mod)
    except BaseException:
        del sys.modules[name]
        raise
    _modules[real] = mod
    return mod


def _compiled(obj: Any, what: str, call: bool = True) -> Any:
    """The _core.Compiled of a compiled graph, a StateGraph or a factory of either."""
    cg = getattr(obj, "_cg", None)
    if cg is not None:
        return cg
    if hasattr(obj, "compile") and hasattr(obj, "add_node"):
        return _compiled(obj.compile(), what, call=False)
    if call and callable(obj) and not isinstance(obj, type):
        params = [p for p in inspect.signature(obj).parameters.values()
                  if p.default is inspect.Parameter.empty
                  and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if len(params) > 1:
            raise TypeError(f"{what}: a graph factory takes no argument or a config, "
                            f"not {len(params)}")
        made = obj({"configurable": {}}) if params else obj()
        if inspect.iscoroutine(made):
            made = asyncio.run(made)
        if hasattr(made, "__enter__") or hasattr(made, "__aenter__"):
            raise TypeError(f"{what}: a factory that is a context manager is not supported")
        return _compiled(made, what, call=False)
    raise TypeError(f"{what} is a {type(obj).__name__}, not a compiled graph, a StateGraph "
                    f"or a function returning one")


def load_graph(graph_id: str, spec: str) -> Any:
    """graph_id's "dir/file.py:attr" as a _core.Compiled (the server's loader)."""
    path, sep, attr = spec.rpartition(":")
    if not sep or not path.endswith(".py") or not attr:
        raise ValueError(f"expected FILE.py:NAME (the variable holding the graph), got '{spec}'")
    obj: Any = _module(path)
    for part in attr.split("."):
        if not hasattr(obj, part):
            raise AttributeError(f"{path} has no '{attr}'")
        obj = getattr(obj, part)
    return _compiled(obj, f"{spec}")


# ---- the config's dependencies and env -----------------------------------


def _dotenv(path: str) -> Dict[str, str]:
    out: Dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line.startswith("export "):
                line = line[7:]
            key, eq, val = line.partition("=")
            if line.startswith("#") or not eq or not key:
                continue
            if len(val) >= 2 and val[0] in "\"'" and val[-1] == val[0]:
                val = val[1:-1]
            out[key] = val
    return out


def prepare(config: str) -> None:
    """What the C server's config reading cannot do for Python: local `dependencies`
    go on sys.path, and `env` reaches os.environ (never over a variable already set)."""
    try:
        with open(config, encoding="utf-8") as f:
            cfg = json.load(f)
    except (OSError, ValueError):
        return  # the server names the problem
    if not isinstance(cfg, dict):
        return
    here = os.path.dirname(os.path.abspath(config))
    deps = cfg.get("dependencies")
    for dep in deps if isinstance(deps, list) else []:
        if isinstance(dep, str) and (dep.startswith(".") or dep.startswith("/")):
            full = os.path.normpath(os.path.join(here, dep))
            if full not in sys.path:
                sys.path.insert(0, full)
        # a package name must already be installed: nothing is fetched
    env = cfg.get("env")
    values: Dict[str, Any] = {}
    if isinstance(env, str):
        try:
            values = _dotenv(os.path.join(here, env))
        except OSError:
            return  # the server names the file
    elif isinstance(env, dict):
        values = env
    for k, v in values.items():
        if isinstance(v, str):
            os.environ.setdefault(k, v)


# ---- the command -----------------------------------------------------------


def _fail(command: str, msg: str, code: int = 1) -> int:
    print(f"superstep {command}: {msg}", file=sys.stderr)
    return code


def main(argv: Optional[List[str]] = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    command = argv[0] if argv and argv[0] in ("serve", "worker") else "serve"
    if argv and argv[0] in ("serve", "worker"):
        argv = argv[1:]
    a = _parser(command).parse_args(argv)
    if a.otlp_endpoint is not None or a.trace_content:
        return _fail(command, "--otlp-endpoint and --trace-content are not supported with "
                     "Python graphs yet (docs/python.md)", 2)
    if a.config is None and not a.graph:
        return _fail(command, "nothing to serve: give a CONFIG file (langgraph.json) or "
                     "--graph NAME=SPEC", 2)
    for g in a.graph:
        if "=" not in g or g.startswith("="):
            return _fail(command, f"--graph: expected NAME=SCRIPT.lua or NAME=FILE.py:NAME, "
                         f"got '{g}'", 2)
    db = a.db or os.environ.get("SUPERSTEP_DB") or "superstep.db"
    if command == "worker" and not db.startswith(("postgresql://", "postgres://")):
        return _fail(command, f"--db: a worker needs a PostgreSQL database (postgresql://...), "
                     f"got '{a.db or '(none)'}'", 2)
    opts: Dict[str, Any] = dict(db=db, workers=a.workers, lease=a.lease, quiet=a.quiet,
                                workers_only=command == "worker")
    if command == "serve":
        token = None
        if a.auth_token_env is not None:
            token = os.environ.get(a.auth_token_env)
            if not token:
                return _fail(command, f"--auth-token-env: the environment variable "
                             f"{a.auth_token_env} is not set or empty", 2)
        web_dir = a.web_dir or os.environ.get("SST_WEB_DIR") or None
        if web_dir is not None and not os.path.isdir(web_dir):
            return _fail(command, f"--web-dir: '{web_dir}' is not a directory", 2)
        opts.update(host=a.host, port=a.port, auth_token=token,
                    insecure_listen_any=a.insecure_listen_any, shared_db=a.shared_db,
                    max_body=a.max_body, max_connections=a.max_connections,
                    http_threads=a.http_threads, timeout=a.timeout,
                    stream_backlog=a.stream_backlog, runs_per_thread=a.runs_per_thread,
                    web_dir=web_dir, no_web=a.no_web)
    if not hasattr(_core, "Server"):
        return _fail(command, "this build of the superstep module has no server: build it "
                     "with CMake (-DSST_BUILD_PYTHON=ON) or pip install with "
                     "SUPERSTEP_BUILD_DIR=<a CMake build> (docs/python.md)")
    try:
        server = _core.Server(**opts)
    except RuntimeError as e:
        return _fail(command, str(e))
    try:
        return _run(server, a, command)
    finally:
        server.close()


def _stop_signals() -> Tuple[int, int]:
    """A pipe (read end, write end) whose reading end receives the number of every SIGTERM
    and SIGINT (as one byte), whichever thread of the process the kernel gave it to.

    Python runs a signal's handler in the main thread only, when that thread next runs
    bytecode. The server's threads (workers, HTTP) do not block SIGTERM, so the kernel may
    hand the signal to one of them: its C-level handler then only marks the signal as
    received, and a main thread asleep in a lock's wait (threading.Event.wait) is not woken
    and would sleep on (issue 34). The wakeup fd is written by that C-level handler in
    whatever thread it runs, so a wait on the pipe never misses a signal, and a signal
    received before the wait is in the pipe already."""
    r, w = os.pipe()
    os.set_blocking(r, False)
    os.set_blocking(w, False)
    signal.set_wakeup_fd(w, warn_on_full_buffer=False)
    # The handlers only make the C-level handler write the wakeup fd (and replace
    # KeyboardInterrupt): the main thread reads which signal came from the pipe.
    signal.signal(signal.SIGTERM, lambda sig, frame: None)
    signal.signal(signal.SIGINT, lambda sig, frame: None)
    return r, w


def _wait_stop_signal(r: int) -> str:
    """Waits for SIGTERM or SIGINT on the pipe of _stop_signals; the signal's name."""
    readable = select.poll()  # not select(): the pipe's number may be above FD_SETSIZE
    readable.register(r, select.POLLIN)
    while True:
        readable.poll()
        try:
            data = os.read(r, 64)
        except BlockingIOError:
            continue
        for num in data:
            if num in (signal.SIGTERM, signal.SIGINT):
                return signal.Signals(num).name


def _run(server: Any, a: argparse.Namespace, command: str) -> int:
    # SIGTERM and SIGINT stop the server gracefully, from the moment it may start: one
    # received while it starts is in the pipe, and stops it once started.
    r, w = _stop_signals()
    try:
        return _serve(server, a, command, r)
    finally:
        signal.set_wakeup_fd(-1)
        os.close(r)
        os.close(w)


def _serve(server: Any, a: argparse.Namespace, command: str, r: int) -> int:
    try:
        if a.config is not None:
            prepare(a.config)
            server.load_config(a.config, load_graph)
        for g in a.graph:
            name, _, spec = g.partition("=")
            if spec.rpartition(":")[0].endswith(".py"):
                server.add_graph(name, load_graph(name, spec), spec.rpartition(":")[0])
            else:
                server.add_script(name, spec)
        server.start()
    except (RuntimeError, ValueError, TypeError, OSError, ImportError, AttributeError) as e:
        cause = e.__cause__
        msg = str(e)
        if cause is not None and not isinstance(e, RuntimeError):
            msg += f" ({type(cause).__name__}: {cause})"
        if not a.quiet and (cause is not None or not isinstance(e, (RuntimeError, ValueError))):
            import traceback
            traceback.print_exception(cause if cause is not None else e, file=sys.stderr)
        return _fail(command, msg)
    if command == "worker":
        print("working", flush=True)
    else:
        url = f"http://{a.host}:{server.port}"
        print(f"listening on {url}", flush=True)
        if a.open:
            import webbrowser
            host = "127.0.0.1" if a.host in ("0.0.0.0", "::") else a.host
            if not webbrowser.open(f"http://{host}:{server.port}/"):
                print(f"superstep {command}: --open: open {url}/ in a browser", file=sys.stderr)
    got = _wait_stop_signal(r)
    if not a.quiet:
        print(f"superstep {command}: {got}: stopping (running runs stop at a superstep "
              f"boundary)", file=sys.stderr)
    server.close()
    return 0
