#!/usr/bin/env bash
# examples/lua/essay.lua (the functional API: an entrypoint with tasks)
# through the superstep tool on SQLite: the first run writes the outline and
# three sections in parallel and stops at the human review; a second process
# resumes with "approve" (or feedback, on a copy) without running the outline
# or the sections again. Then a run killed with -9 while its last section
# sleeps is continued: only that section runs again.
# Each task of the example writes a line on stderr when it runs, which is
# how the test sees what ran.
# Usage: test_essay.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
script=$(realpath "$2")/examples/lua/essay.lua
work=$(mktemp -d)
victim=
trap '[ -n "$victim" ] && kill -9 "$victim" 2>/dev/null; rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0
unset ESSAY_SLOW

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

[ -f "$script" ] || { echo "FAIL: no $script"; exit 1; }
run() { "$bin" run "$script" --db "$work/essay.db" --thread e1 "$@"; }
draft='## What durable workflows are\n\nA paragraph on what durable workflows are.\n\n## Why durable workflows matter\n\nA paragraph on why durable workflows matter.\n\n## How to start with durable workflows\n\nA paragraph on how to start with durable workflows.'

# 1. The first run: the outline, three sections, and the review's interrupt
#    with the draft (exit code 3).
expect_rc 3 run --input '{"topic":"durable workflows"}' --json
contains "$out" '"status":"interrupted"' "status"
contains "$out" "\"value\":{\"draft\":\"$draft\",\"question\":\"approve?\"}" \
  "the interrupt carries the whole draft and the question"
[ "$(count "$err" 'outline: durable workflows')" = 1 ] || fail "one outline: $err"
for n in 1 2 3; do
  [ "$(count "$err" "section $n: ")" = 1 ] || fail "section $n once: $err"
done
contains "$err" "section 2: Why durable workflows matter" "the second section's title"
lacks "$err" "revise:" "nothing revised yet"
id=$(grep -o '"interrupts":\[{"id":"[0-9a-f]*"' <<<"$out" | grep -o '[0-9a-f]\{16,\}')
[ -n "$id" ] || fail "no interrupt id in: $out"

# 2. `superstep state` shows the pending interrupt.
expect_rc 0 "$bin" state "$script" --db "$work/essay.db" --thread e1 --json
contains "$out" "\"id\":\"$id\"" "state: the pending interrupt's id"
contains "$out" '"question":"approve?"' "state: the question"

# 3. Feedback, on a copy of the database: the revise task runs, nothing else.
cp "$work/essay.db" "$work/copy.db"
expect_rc 0 "$bin" run "$script" --db "$work/copy.db" --thread e1 --resume '"shorter please"' --json
contains "$out" '"status":"completed"' "revision: completed"
contains "$out" '"status":"revised"' "revision: the essay's status"
contains "$out" "(revised: shorter please)" "revision: the feedback is worked in"
[ "$(count "$err" 'revise: shorter please')" = 1 ] || fail "one revision: $err"
lacks "$err" "outline:" "revision: the outline did not run again"
lacks "$err" "section " "revision: no section ran again"

# 4. Approval in a second process, as the README shows it (no --json): the
#    final essay on stdout, and no task runs again.
expect_rc 0 run --resume '"approve"'
contains "$out" '"status": "published"' "approved: published"
contains "$out" '"essay": "## What durable workflows are' "approved: the essay"
contains "$out" 'A paragraph on how to start with durable workflows."' "approved: the last section"
lacks "$out" "revised" "approved: not revised"
lacks "$err" "outline:" "approved: the outline did not run again"
lacks "$err" "section " "approved: no section ran again"
lacks "$err" "revise:" "approved: nothing revised"
contains "$err" "completed in" "approved: the run completed"

# 5. Nothing is left pending; the history has the thread's checkpoints.
expect_rc 0 "$bin" state "$script" --db "$work/essay.db" --thread e1 --json
contains "$out" '"interrupts":[]' "no interrupt left"
contains "$out" '"status":"published"' "the state is the entrypoint's result"

# 6. The updates stream: one chunk per finished task, the interrupt, and on
#    resume the entrypoint's result under its name.
expect_rc 3 "$bin" run "$script" --db "$work/essay.db" --thread e2 --input '{"topic":"bees"}' \
  --stream updates
contains "$(line "$out" 1)" '{"outline":["What bees are","Why bees matter","How to start with bees"]}' \
  "updates: the outline first"
[ "$(count "$out" '{"section":"## ')" = 3 ] || fail "updates: three sections: $out"
contains "$out" '{"__interrupt__":[{"id":"' "updates: the interrupt"
expect_rc 0 "$bin" run "$script" --db "$work/essay.db" --thread e2 --resume '"approve"' \
  --stream updates,custom
contains "$out" '["custom",{"sections":3}]' "custom: the entrypoint's event"
# (the CLI prints the entrypoint's chunk as C gives it, the result under "__root__")
grep -Eq '^\["updates",\{"essay":\{("__root__":\{)?"essay":"## What bees are.*with bees\.","status":"published","topic":"bees"\}\}\}?\]$' <<<"$out" ||
  fail "updates: the entrypoint's result: $out"
lacks "$out" '{"section":' "updates: the sections were not run again"

# 7. kill -9 while the last section sleeps (the first two finished and were
#    written as pending writes); continuing the thread in a new process runs
#    that section only, and the run stops at the review as before.
ESSAY_SLOW=600 "$bin" run "$script" --db "$work/k.db" --thread k --input '{"topic":"durable workflows"}' \
  >"$work/k.out" 2>"$work/k.err" &
victim=$!
for _ in $(seq 1 600); do
  [ "$(count "$(cat "$work/k.err")" 'section ')" = 3 ] && break
  sleep 0.1
done
[ "$(count "$(cat "$work/k.err")" 'section ')" = 3 ] || fail "the sections never started: $(cat "$work/k.err")"
# The first two sections' results reach the database as each ends (pending writes,
# table "writes"): wait until both are there, then kill.
written() {
  local body
  body=$(sqlite3 "$work/k.db" "select body from writes" 2>/dev/null)
  grep -q "A paragraph on what durable workflows are" <<<"$body" &&
    grep -q "A paragraph on why durable workflows matter" <<<"$body"
}
for _ in $(seq 1 600); do
  written && break
  sleep 0.1
done
written || fail "the first two sections were never written: $(sqlite3 "$work/k.db" "select body from writes" 2>&1)"
kill -9 "$victim" 2>/dev/null
wait "$victim" 2>/dev/null
victim=
lacks "$(cat "$work/k.err")" "interrupted" "the killed run did not get to the review"
expect_rc 3 "$bin" run "$script" --db "$work/k.db" --thread k --json
contains "$out" "\"value\":{\"draft\":\"$draft\",\"question\":\"approve?\"}" \
  "after the crash: the same draft at the review"
lacks "$err" "outline:" "after the crash: the outline did not run again"
lacks "$err" "section 1:" "after the crash: section 1 did not run again"
lacks "$err" "section 2:" "after the crash: section 2 did not run again"
[ "$(count "$err" 'section 3: How to start with durable workflows')" = 1 ] ||
  fail "after the crash: section 3 ran once: $err"
expect_rc 0 "$bin" run "$script" --db "$work/k.db" --thread k --resume '"approve"' --json
contains "$out" '"status":"published"' "after the crash: approved"
lacks "$err" "section " "after the crash: no section on approval"

# 8. README's essay line, as written (./build/ and the database moved into $work).
readme=$(sed -n 's/^    \(rm -f \/tmp\/superstep-essay\.db\* .*\)$/\1/p' "$(realpath "$2")/README.md")
if [ -z "$readme" ]; then
  fail "README has no essay line (rm -f /tmp/superstep-essay.db* ...)"
else
  mkdir -p "$work/readme/build"
  ln -s "$bin" "$work/readme/build/superstep"
  ln -s "$(realpath "$2")/examples" "$work/readme/examples"
  expect_rc 0 bash -c "cd '$work/readme' && ${readme//\/tmp\/superstep-essay.db/$work/readme/essay.db}"
  contains "$err" "interrupted after" "README: the first run stops at the review"
  contains "$err" '"question": "approve?"' "README: the review's question"
  contains "$out" '"status": "published"' "README: the resume publishes the essay"
  [ "$(count "$err" 'section ')" = 3 ] || fail "README: three sections in all: $err"
fi

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all essay example checks passed"
