#!/usr/bin/env bash
# Threads `superstep run` wrote, then served: `superstep serve` on the same
# database reads them (any id; the CLI stamps the metadata graph_id, the
# script's name, and script, its path), resumes one through the API, and the
# CLI sees the result. Ids that name no thread are still refused as
# LangGraph's API refuses them. The thread's graph is shown as the web page's
# thread list reads it (metadata.graph_id of threads/search), also when the
# script is served under another name, and not when another script is.
# Usage: test_serve_cli_threads.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cd "$work"
script=$root/examples/lua/research.lua
failures=0
# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

expect_rc 3 "$bin" run "$script" --db cli.db --thread demo --input '{"topic":"durable graphs"}'
expect_rc 0 "$bin" threads "$script" --db cli.db --json
contains "$out" "\"metadata\":{\"graph_id\":\"research\",\"script\":\"$script\"}" "the CLI names the thread's graph"
printf 'local g = superstep.StateGraph{}\ng:add_node("a", function() return {} end)\ng:add_edge(superstep.START, "a")\nreturn g\n' >other.lua
expect_rc 0 "$bin" run other.lua --db cli.db --thread other --input '{}'

# serve GRAPH=SCRIPT...: starts a server on cli.db; its URL in $url.
serve() {
  local args=()
  for g in "$@"; do args+=(--graph "$g"); done
  "$bin" serve "${args[@]}" --db cli.db --port 0 --quiet >serve.out 2>serve.err &
  pid=$!
  for _ in $(seq 1 100); do grep -q listening serve.out 2>/dev/null && break; sleep 0.1; done
  url=$(sed -n 's/^listening on \(http:[^ ]*\)$/\1/p' serve.out)
  [ -n "$url" ] || { fail "serve did not start: $(cat serve.err)"; exit $failures; }
}
api() { curl -s -H 'content-type: application/json' "$@"; }
# graph_of ID: the graph the thread list shows for thread ID ("" for none).
graph_of() {
  api "$url/threads/search" -d '{"select":["thread_id","metadata"],"limit":100}' |
    python3 -c 'import json,sys; print(next((t["metadata"].get("graph_id", "") for t in json.load(sys.stdin) if t["thread_id"] == sys.argv[1]), "(not listed)"))' "$1"
}

# The script under another name, beside another graph: found by its path.
serve main="$script" extra=other.lua
[ "$(graph_of demo)" = main ] || fail "served as main: the thread list shows graph '$(graph_of demo)'"
[ "$(graph_of other)" = extra ] || fail "other.lua served as extra: shows '$(graph_of other)'"
out=$(api "$url/threads/demo/state")
contains "$out" '"next":["approve"]' "its state, read with the graph served as main"
kill "$pid"; wait "$pid"; pid=
# Another script only: the thread names a graph that is not served.
serve extra=other.lua
[ "$(graph_of demo)" = research ] || fail "research.lua not served: shows '$(graph_of demo)'"
kill "$pid"; wait "$pid"; pid=

serve research="$script"
[ "$(graph_of demo)" = research ] || fail "served as research: shows '$(graph_of demo)'"
out=$(api "$url/threads/search" -d '{}')
contains "$out" '"thread_id":"demo"' "search lists the CLI's thread"
contains "$out" '"status":"interrupted"' "as interrupted"
out=$(api "$url/threads/demo/state")
contains "$out" '"next":["approve"]' "its state, read as the served graph's"
contains "$out" '"question":"publish the report?"' "its pending interrupt"
out=$(api "$url/threads/demo/history" -d '{"limit":100}')
n=$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)
[ "$n" -ge 6 ] || fail "history: want its checkpoints (each with a parent), got $n ids"
out=$(api "$url/threads/demo/runs/wait" -d '{"assistant_id":"research","command":{"resume":"yes"}}')
contains "$out" '"report":"durable graphs: 3 notes from 1 sources"' "resumed through the API"
out=$(api "$url/threads/nothing-here/state")
contains "$out" "thread_id must be a UUID, got 'nothing-here'" "an id naming no thread"
kill "$pid"; wait "$pid"; pid=

expect_rc 0 "$bin" state "$script" --db cli.db --thread demo --json
contains "$out" '"approved":true,"report":"durable graphs: 3 notes from 1 sources"' "the CLI sees the API's run"
[ $failures = 0 ] && echo "CLI threads served: ok"
exit $failures
