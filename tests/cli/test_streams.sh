#!/usr/bin/env bash
# superstep run --stream as LangGraph streams: the modes tasks, checkpoints
# and debug, several modes at once as [mode, chunk] lines (a list or a
# repeated option), and interrupts in the updates and values streams.
# Usage: test_streams.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

# robot writes, then human asks (interrupt) and writes the answer.
cat >g.lua <<'EOF'
local sst = superstep
local g = sst.StateGraph{ robot = sst.reducers.replace, human = sst.reducers.replace }
g:add_node("robot", function() return { robot = "beep" } end)
g:add_node("human", function() return { human = sst.interrupt("who?") } end)
g:add_edge(sst.START, "robot")
g:add_edge("robot", "human")
return g
EOF

# tasks: a start {id, name, input, triggers} and a result {id, name, error, interrupts, result}.
expect_rc 3 "$bin" run g.lua --db s.db --thread t1 --input '{}' --stream tasks
contains "$(line "$out" 1)" '"name":"robot","input":{},"triggers":["branch:to:robot"]}' "task start"
contains "$(line "$out" 2)" '"name":"robot","error":null,"interrupts":[],"result":{"robot":"beep"}}' \
  "task result"
contains "$(line "$out" 4)" '"name":"human","error":null,"interrupts":[{"id":"' "interrupted task"
contains "$(line "$out" 4)" '"value":"who?"}],"result":{}}' "interrupted task's value"
[ "$(grep -c . <<<"$out")" = 4 ] || fail "tasks printed: $out"
id=$(line "$out" 1 | grep -o '"id":"[^"]*"' | head -1)
contains "$(line "$out" 2)" "$id" "the result has the start's id"

# Several modes: [mode, chunk] lines; the interrupt in updates and values.
expect_rc 3 "$bin" run g.lua --db s.db --thread t2 --input '{}' --stream updates,values
[ "$(line "$out" 1)" = '["updates",{"robot":{"robot":"beep"}}]' ] || fail "pair 1: $out"
[ "$(line "$out" 2)" = '["values",{"robot":"beep"}]' ] || fail "pair 2 (no values for {}): $out"
contains "$(line "$out" 3)" '["updates",{"__interrupt__":[{"id":"' "interrupt in updates"
contains "$(line "$out" 4)" '["values",{"robot":"beep","__interrupt__":[{"id":"' \
  "interrupt in values"
# A resume starts with the current values; the modes may be repeated.
expect_rc 0 "$bin" run g.lua --db s.db --thread t2 --resume '"ada"' --stream values --stream updates
[ "$(line "$out" 1)" = '["values",{"robot":"beep"}]' ] || fail "resume starts with values: $out"
[ "$(line "$out" 2)" = '["updates",{"human":{"human":"ada"}}]' ] || fail "resume update: $out"

# checkpoints: each as written, LangGraph's CheckpointPayload.
expect_rc 3 "$bin" run g.lua --db s.db --thread t3 --input '{"robot":"r0"}' --stream checkpoints
[ "$(grep -c . <<<"$out")" = 3 ] || fail "three checkpoints (input, loop, after robot): $out"
contains "$(line "$out" 1)" '"parent_config":null,"values":{},"metadata":{"source":"input","step":-1' \
  "input checkpoint"
contains "$(line "$out" 1)" '"next":["__start__"],"tasks":[{"id":"' "input checkpoint's task"
contains "$(line "$out" 2)" '"values":{"robot":"r0"},"metadata":{"source":"loop","step":0' "loop checkpoint"
contains "$(line "$out" 3)" '"next":["human"]' "next of the last checkpoint"
contains "$(line "$out" 3)" '"name":"human","interrupts":[],"state":null}' "checkpoint task"

# debug: {type, timestamp, step, payload}, the first node at step 1.
expect_rc 3 "$bin" run g.lua --db s.db --thread t4 --input '{}' --stream debug
contains "$(line "$out" 1)" '{"type":"checkpoint","timestamp":"' "debug checkpoint"
contains "$(line "$out" 1)" '"step":-1,"payload":{"config":' "input checkpoint at step -1"
contains "$(line "$out" 3)" '{"type":"task","timestamp":"' "debug task"
contains "$(line "$out" 3)" '"step":1,"payload":{"id":"' "first task at step 1"
contains "$(line "$out" 4)" '"type":"task_result"' "debug task result"
lacks "$out" '"type":"commit"' "no commit events any more"

# interrupt_before: {"__interrupt__": []}.
cat >b.lua <<'EOF'
local sst = superstep
local g = sst.StateGraph{ x = sst.reducers.replace }
g:add_node("a", function() return { x = 1 } end)
g:add_node("b", function() return { x = 2 } end)
g:add_edge(sst.START, "a")
g:add_edge("a", "b")
return g:compile{ interrupt_before = { "b" } }
EOF
expect_rc 3 "$bin" run b.lua --db s.db --thread t5 --input '{}' --stream updates
[ "$(line "$out" 2)" = '{"__interrupt__":[]}' ] || fail "interrupt_before in updates: $out"

expect_rc 2 "$bin" run g.lua --stream updates,loud
contains "$err" "unknown mode 'loud'" "bad mode in a list"
contains "$err" "checkpoints" "the modes are listed"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all CLI stream checks passed"
