#!/usr/bin/env bash
# examples/python/memory_agent.py, the Python twin of examples/lua/memory_agent.lua
# (tests/cli/test_memory_agent.sh): the agent stores a fact in one thread (the scripted
# model calls manage_memory, a tool with the store injected) and, in a new thread of the
# same user, finds it with search_memory and answers with it.
# Usage: test_python_memory_agent.sh PYTHON_RUNNER REPO_ROOT
set -uo pipefail
# shellcheck source=tests/cli/example.sh
source "$(dirname "${BASH_SOURCE[0]}")/example.sh" "$1" "$2" python/memory_agent.py

# From any directory: the script finds its replies file.
expect_rc 0 "$runner" "$script"
contains "$out" '"answer": "Your favourite colour is teal."' "the answer"
contains "$out" '"recalled": "[{\"namespace\":[\"memories\",\"u1\"],\"key\":\"' \
  "thread 2 recalled a memory of user u1"
# shellcheck source=tests/cli/memory_agent_run.sh
source "$here/memory_agent_run.sh"
[ "$(count "$err" 'thread 2:')" = 1 ] || fail "two threads: $err"

# The namespace follows the run's user.
expect_rc 0 "$runner" "$script" --user ada
contains "$out" '"recalled": "[{\"namespace\":[\"memories\",\"ada\"]' "user ada's namespace"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all Python memory agent example checks passed"
