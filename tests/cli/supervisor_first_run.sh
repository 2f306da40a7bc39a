# shellcheck shell=bash
# What the first run of the supervisor example (examples/lua/supervisor.lua and its
# Python twin) shows the same in both, in $out and its trace $err (sourced by
# test_supervisor.sh and test_python_supervisor.sh, after example.sh): the
# researcher's conversation stays in its subgraph, nothing is approved yet, three
# model turns with one search and one read, and the handoff picks the writer, which
# drafts once.
lacks "$out" '"messages"' "the researcher's conversation stays in the subgraph"
lacks "$out" '"approved"' "nothing approved yet"
[ "$(count "$err" 'researcher/model: turn')" = 3 ] || fail "three model turns: $err"
[ "$(count "$err" 'researcher/tools: search ->')" = 1 ] || fail "one search: $err"
[ "$(count "$err" 'researcher/tools: read ->')" = 1 ] || fail "one read: $err"
contains "$err" "researcher/handoff: 3 findings -> writer" "the handoff"
lacks "$err" "supervisor: next is writer" "the handoff, not the supervisor, picks the writer"
[ "$(count "$err" 'writer/draft:')" = 1 ] || fail "one draft: $err"
