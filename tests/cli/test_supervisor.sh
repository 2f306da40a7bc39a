#!/usr/bin/env bash
# examples/lua/supervisor.lua through the superstep tool: a supervisor with a
# researcher subgraph (a scripted tool loop that hands off with
# Command{graph = PARENT}) and a writer subgraph that asks for approval with
# interrupt(). The run stops at the writer's question, `state` shows it, and
# a resume in another process finishes without running the researcher (or
# the writer's draft) again.
# Usage: test_supervisor.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
# shellcheck source=tests/cli/example.sh
source "$(dirname "${BASH_SOURCE[0]}")/example.sh" "$1" "$2" lua/supervisor.lua
run() { "$runner" run "$script" --db "$work/sv.db" --thread t1 "$@"; }
findings='"findings":["3 articles on durable graphs","https://example.org/durable-graphs: checkpoints make long runs resumable","Done researching durable graphs."]'

# 1. The first run: the researcher's tool loop, the handoff, and the writer
#    stops at its approval question (exit code 3).
expect_rc 3 run --input '{"task":"durable graphs"}' --json
contains "$out" '"status":"interrupted"' "status"
contains "$out" '"node":"writer","value":{"draft":"Report: 3 articles on durable graphs / ' \
  "the writer's interrupt carries the draft"
contains "$out" '"question":"Approve this draft?"}' "the approval question"
contains "$out" '"ns":"writer:' "the interrupt comes from the writer subgraph"
contains "$out" "$findings" "the researcher's findings reached the supervisor"
contains "$out" '"tool_calls":2' "two tool calls"
# shellcheck source=tests/cli/supervisor_first_run.sh
source "$here/supervisor_first_run.sh"
id=$(grep -o '"interrupts":\[{"id":"[0-9a-f]*"' <<<"$out" | grep -o '[0-9a-f]\{16,\}')
[ -n "$id" ] || fail "no interrupt id in: $out"

# 2. `superstep state` shows the pending interrupt and the writer next.
expect_rc 0 "$runner" state "$script" --db "$work/sv.db" --thread t1 --json
contains "$out" '"next":["writer"]' "state: next"
contains "$out" '"name":"writer"' "state: the writer's task"
contains "$out" "\"interrupts\":[{\"id\":\"$id\"" "state: the pending interrupt's id"
contains "$out" '"question":"Approve this draft?"' "state: the question"

# 3. A feedback answer on a copy of the database: the writer drafts again
#    with it and asks again (the researcher still does not run).
cp "$work/sv.db" "$work/copy.db"
expect_rc 3 "$runner" run "$script" --db "$work/copy.db" --thread t1 --resume '"shorter please"' --json
contains "$out" '(revised: shorter please)","question":"Approve this draft?"}' "a revised draft"
contains "$out" '"feedback":"shorter please"' "the feedback is kept"
lacks "$err" "researcher/" "no research for a revision"

# 4. Resume with "approve" in a second process: the writer continues from its
#    own checkpoint, the supervisor finishes, the researcher does not run again.
expect_rc 0 run --resume '"approve"' --json
contains "$out" '"status":"completed"' "completed"
contains "$out" "$findings" "the findings are kept"
contains "$out" '"draft":"Report: 3 articles on durable graphs / https://example.org/durable-graphs: checkpoints make long runs resumable / Done researching durable graphs."' \
  "the approved draft"
contains "$out" '"approved":true' "approved"
contains "$out" '"tool_calls":2' "still two tool calls: the researcher did not run again"
lacks "$out" '"feedback"' "no feedback on an approval"
lacks "$err" "researcher/" "no researcher node ran on resume"
lacks "$err" "writer/draft" "the draft was not written again"
contains "$err" 'writer/review: "approve"' "the review got the answer"
contains "$err" "supervisor: done" "the supervisor finished"

# 5. Nothing is left pending.
expect_rc 0 "$runner" state "$script" --db "$work/sv.db" --thread t1 --json
contains "$out" '"next":[]' "no next node"
contains "$out" '"interrupts":[]' "no interrupt left"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all supervisor example checks passed"
