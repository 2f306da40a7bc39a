#!/usr/bin/env bash
# examples/lua/memory_agent.lua through the superstep tool: the prebuilt
# agent with LangMem's memory tools stores a fact in one thread (the scripted
# model calls manage_memory) and, in a new thread of the same user, finds it
# with search_memory and answers with it.
# Usage: test_memory_agent.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
# shellcheck source=tests/cli/example.sh
source "$(dirname "${BASH_SOURCE[0]}")/example.sh" "$1" "$2" lua/memory_agent.lua

# As the README shows it (from any directory: the script finds its replies file).
expect_rc 0 "$runner" run "$script" --db :memory: --input '{"user_id":"u1"}' --json
contains "$out" '"status":"completed"' "status"
contains "$out" '"answer":"Your favourite colour is teal."' "the answer"
contains "$out" '"recalled":"[{\"namespace\":[\"memories\",\"u1\"],\"key\":\"' \
  "thread 2 recalled a memory of user u1"
# shellcheck source=tests/cli/memory_agent_run.sh
source "$here/memory_agent_run.sh"

# The namespace follows the run's user_id.
expect_rc 0 "$runner" run "$script" --db :memory: --input '{"user_id":"ada"}' --json
contains "$out" '"recalled":"[{\"namespace\":[\"memories\",\"ada\"]' "user ada's namespace"

# create_react_agent's memory and store options: bad ones are errors naming them.
replies=$repo/examples/agent/memory_replies.jsonl
bad_agent() { # OPTIONS EXPECTED
  printf 'return superstep.create_react_agent{ model = "fake:%s", %s }\n' "$replies" "$1" >bad.lua
  expect_rc 1 "$runner" graph bad.lua
  contains "$err" "$2" "create_react_agent{ $1 }"
}
bad_agent 'memory = { namespace = 5 }' 'memory must be {namespace = {"memories", "{user_id}"}}'
bad_agent 'memory = "x"' 'memory must be {namespace'
bad_agent 'memory = { namespace = { "m", 3 } }' 'memory.namespace: expected a list of names, item 2'
bad_agent 'memory = { namespace = {} }' 'the memory namespace needs at least one label'
bad_agent 'memory = { namespace = { "m", "{}" } }' 'memory namespace label 2 is empty'
bad_agent 'memory = { namespace = "a.b" }' "memory namespace label 1 ('a.b') holds a '.'"
bad_agent 'memory = { namespace = { "m" }, ttl = 3 }' "memory: unknown option 'ttl'"
bad_agent 'store = {}' 'store must be an InMemoryStore(), SqliteStore(path) or PostgresStore(url)'
bad_agent 'memory = { namespace = "m" }, tools = { { name = "manage_memory", fn = function() end } }' \
  "duplicate tool 'manage_memory'"
# A single label is a namespace too, and a SqliteStore works as well as InMemoryStore.
printf 'return superstep.create_react_agent{ model = "fake:%s", memory = { namespace = "notes" },\n  store = superstep.SqliteStore("m.db") }\n' "$replies" >one.lua
expect_rc 0 "$runner" run one.lua --db :memory: --input '{"messages":[{"role":"user","content":"teal"}]}' --json
contains "$out" '"content":"{\"status\":\"created\",\"id\":\"' "a memory in a one-label namespace"
expect_rc 0 "$runner" store search notes --db m.db --json
contains "$out" '"namespace":["notes"]' "the memory is in the SQLite store, under (notes)"
contains "$out" "The user's favourite colour is teal." "its content"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all memory agent example checks passed"
