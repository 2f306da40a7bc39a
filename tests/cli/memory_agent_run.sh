# shellcheck shell=bash
# What a run of the memory agent example (examples/lua/memory_agent.lua and its Python
# twin) shows the same in both, in $out and its trace $err (sourced by
# test_memory_agent.sh and test_python_memory_agent.sh, after example.sh): thread 1
# stored the fact with manage_memory, thread 2 searched and found that very memory.
contains "$out" "\\\"value\\\":{\\\"content\\\":\\\"The user's favourite colour is teal.\\\"}" \
  "the memory thread 1 stored"
contains "$err" 'manage_memory {"status":"created","id":"' "thread 1 created the memory"
contains "$err" 'assistant calls search_memory {"query":"favourite colour"}' "thread 2 searched"
# The memory's id is the one thread 1 was given.
id=$(grep -o 'manage_memory {"status":"created","id":"[0-9a-f-]*"' <<<"$err" | grep -o '[0-9a-f-]\{36\}')
[ -n "$id" ] || fail "no memory id in: $err"
contains "$out" "\\\"key\\\":\\\"$id\\\"" "the search found the memory thread 1 made"
