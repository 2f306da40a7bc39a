#!/usr/bin/env bash
# `superstep serve` of a config with Python graphs (cli/cmd_python.c, python/superstep/serve.py):
# what is missing is named (no interpreter, no module), bad Python specs are refused naming
# the graph and the problem, and both commands exit as `superstep serve` does.
# Then README's line: `superstep serve examples/python/langgraph.json` serves the Python
# research workflow (and its Lua twin) through `python3 -m superstep serve`, driven with curl.
# Usage: test_serve_python.sh SUPERSTEP PYTHON REPO   (PYTHON: the interpreter with the module)
set -u
bin=$1
py=$2
repo=$3
work=$(mktemp -d)
pid=""
# The server is never left behind, whatever way the script ends.
trap '[ -n "$pid" ] && kill -9 "$pid" 2>/dev/null; rm -rf "$work"' EXIT
failures=0
# Every wait below has a deadline (seconds, not a count of sleeps), far above what a busy
# machine needs, so that a hang fails naming the step instead of running into CTest's timeout.
limit=120
step() { echo "step: $*" >&2; }
# stacks PID: the server's threads, printed when it does not answer or does not stop.
stacks() {
  command -v gdb >/dev/null 2>&1 &&
    timeout 60 gdb -p "$1" -batch -ex 'thread apply all bt' 2>/dev/null | grep -E '^(Thread|#)' | head -150
}
. "$(dirname "$0")/harness.sh"
# listening OUT: waits for the "listening on" line of the server $pid in OUT; $url is its
# address, or empty when it did not come within the deadline or the server exited.
listening() {
  url=""
  local deadline=$((SECONDS + limit))
  while [ "$SECONDS" -lt "$deadline" ]; do # returns as soon as the line is there
    url=$(grep -o 'http://[0-9.:]*' "$1" 2>/dev/null | head -1)
    [ -n "$url" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
}
# stopped WHAT ERR: waits for the server $pid to exit (within the deadline, else its stacks and
# kill -9), then checks that it exited 0 (ERR: its stderr, shown when not).
stopped() {
  local deadline=$((SECONDS + limit))
  while kill -0 "$pid" 2>/dev/null && [ "$SECONDS" -lt "$deadline" ]; do sleep 0.1; done
  if kill -0 "$pid" 2>/dev/null; then
    fail "$1: still running $limit s after SIGTERM: $(cat "$2")"
    stacks "$pid"
    kill -9 "$pid"
  fi
  wait "$pid"
  local rc=$?
  pid=""
  [ "$rc" = 0 ] || fail "$1: exited $rc after SIGTERM: $(cat "$2")"
}

mkdir -p "$work/g"
cat >"$work/g/agent.py" <<'PY'
from typing import TypedDict
from superstep.graph import StateGraph, START, END
class S(TypedDict, total=False):
    x: int
b = StateGraph(S)
b.add_node("one", lambda s: {"x": 1})
b.add_edge(START, "one")
b.add_edge("one", END)
graph = b.compile()
not_a_graph = 42
def broken():
    raise RuntimeError("the factory failed")
PY
cfg() { printf '{"graphs": {"agent": "%s"}}' "$1" >"$work/langgraph.json"; }

# The C CLI: no interpreter, then an interpreter without the module.
cfg "./g/agent.py:graph"
expect_rc 1 env SUPERSTEP_PYTHON="$work/no-such-python" "$bin" serve "$work/langgraph.json" --port 0
contains "$err" "Python graph (agent: ./g/agent.py:graph)" "no interpreter: the graph"
contains "$err" "cannot be run" "no interpreter"
expect_rc 1 env SUPERSTEP_PYTHON=/bin/false "$bin" serve "$work/langgraph.json" --port 0
contains "$err" "cannot import the Python module superstep" "no module"
contains "$err" "pip install ./python" "no module: how to get it"
# A --graph option naming a Python file goes the same way.
expect_rc 1 env SUPERSTEP_PYTHON=/bin/false "$bin" serve --graph "a=$work/g/agent.py:graph" --port 0
contains "$err" "--graph a=" "--graph: the graph"

# The Python command: bad specs name the graph and the problem (exit 1), usage errors 2.
serve_py() { env SUPERSTEP_DB="$work/t.db" "$py" -m superstep serve "$@"; }
cfg "./g/agent.py:nope"
expect_rc 1 serve_py "$work/langgraph.json" --port 0 --quiet
contains "$err" "graph 'agent'" "missing attribute: the graph"
contains "$err" "has no 'nope'" "missing attribute"
cfg "./g/agent.py:not_a_graph"
expect_rc 1 serve_py "$work/langgraph.json" --port 0 --quiet
contains "$err" "is a int, not a compiled graph" "not a graph"
cfg "./g/agent.py:broken"
expect_rc 1 serve_py "$work/langgraph.json" --port 0 --quiet
contains "$err" "the factory failed" "a failing factory"
cfg "./g/agent.py"
expect_rc 1 serve_py "$work/langgraph.json" --port 0 --quiet
contains "$err" "expected FILE.py:NAME" "no attribute"
cfg "./g/missing.py:graph"
expect_rc 1 serve_py "$work/langgraph.json" --port 0 --quiet
contains "$err" "no such file" "missing file"
# A Python auth file (LangGraph's Auth) is not run: refused at start, saying what to use.
printf '{"graphs": {"agent": "./g/agent.py:graph"}, "auth": {"path": "./auth.py:my_auth"}}' \
  >"$work/langgraph.json"
expect_rc 1 serve_py "$work/langgraph.json" --port 0 --quiet
contains "$err" "names a Python auth file (./auth.py:my_auth)" "Python auth: refused"
contains "$err" "Write them in a Lua file" "Python auth: what to use instead"
expect_rc 2 "$py" -m superstep serve
contains "$err" "nothing to serve" "no config"
expect_rc 2 "$py" -m superstep serve "$work/langgraph.json" --port 99999
contains "$err" "--port" "bad port"
expect_rc 2 "$py" -m superstep
contains "$err" "usage: python3 -m superstep serve" "no command"
expect_rc 2 "$py" -m superstep worker "$work/langgraph.json" --db "$work/x.db"
contains "$err" "a worker needs a PostgreSQL database" "worker without PostgreSQL"

# README: the served Python example, a run to its interrupt and the resume (the C CLI execs
# the Python command; SIGTERM stops it with exit 0).
step "serve examples/python/langgraph.json"
SUPERSTEP_PYTHON="$py" "$bin" serve "$repo/examples/python/langgraph.json" --db "$work/r.db" \
  --port 0 >"$work/serve.out" 2>"$work/serve.err" &
pid=$!
listening "$work/serve.out"
if [ -z "$url" ]; then
  fail "serve examples/python/langgraph.json did not listen within $limit s: $(cat "$work/serve.err")"
  kill -0 "$pid" 2>/dev/null && stacks "$pid"
  kill -9 "$pid" 2>/dev/null
else
  T=00000000-0000-4000-8000-000000000001
  post() {
    step "POST $1 $2"
    curl -sS --max-time "$limit" "$url$1" -H 'content-type: application/json' -d "$2" ||
      { fail "POST $1: no answer within $limit s"; stacks "$pid"; }
  }
  post /threads "{\"thread_id\":\"$T\"}" >/dev/null
  out=$(post "/threads/$T/runs/wait" '{"assistant_id":"research","input":{"topic":"durable graphs"}}')
  contains "$out" '"__interrupt__"' "served Python graph: the interrupt"
  contains "$out" '"publish the report?"' "served Python graph: its question"
  out=$(post "/threads/$T/runs/wait" '{"assistant_id":"research","command":{"resume":"yes"}}')
  contains "$out" '"report":"durable graphs: 3 notes from 1 sources"' "served Python graph: resumed"
  out=$(post /runs/wait '{"assistant_id":"research_lua","input":{"topic":"durable graphs"}}')
  contains "$out" '"__interrupt__"' "the Lua graph beside it"
  step "SIGTERM"
  kill -TERM "$pid"
fi
stopped "serve" "$work/serve.err"
contains "$(cat "$work/serve.err")" "SIGTERM: stopping" "serve: SIGTERM"

# A SIGTERM taken by one of the server's threads instead of the main thread (the kernel
# gives a process's signal to any thread that does not block it, and the server's worker
# and HTTP threads do not; Python runs the handler in the main thread only): the server
# stops all the same. Issue 34: the main thread slept on in its wait, and the test hung.
# tgkill sends the signal to one thread: an HTTP thread (libmicrohttpd names them MHD-...),
# else the first that is not the main thread (not any: a sanitizer's own thread, as
# TSan's background thread, never runs the process's handlers).
step "serve: SIGTERM to a thread that is not the main one"
cfg "./g/agent.py:graph"
env SUPERSTEP_DB="$work/t2.db" "$py" -m superstep serve "$work/langgraph.json" --port 0 \
  >"$work/serve2.out" 2>"$work/serve2.err" &
pid=$!
listening "$work/serve2.out"
tid=$(grep -l '^MHD' /proc/"$pid"/task/*/comm 2>/dev/null | head -1 | cut -d/ -f5)
[ -n "$tid" ] || tid=$(ls "/proc/$pid/task" 2>/dev/null | grep -vx "$pid" | head -1)
if [ -z "$url" ] || [ -z "$tid" ]; then
  fail "serve: not listening within $limit s, or no thread but main: $(cat "$work/serve2.err")"
  kill -9 "$pid" 2>/dev/null
else
  "$py" -c 'import ctypes, signal, sys
sys.exit(ctypes.CDLL(None).tgkill(int(sys.argv[1]), int(sys.argv[2]), signal.SIGTERM))' \
    "$pid" "$tid" || fail "tgkill $pid $tid SIGTERM failed"
fi
stopped "serve, SIGTERM to thread $tid" "$work/serve2.err"
contains "$(cat "$work/serve2.err")" "SIGTERM: stopping" "serve, SIGTERM to a thread"

exit "$failures"
