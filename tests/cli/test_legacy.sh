#!/usr/bin/env bash
# A database written by an older build reads back the same: tests/data/legacy/v3.db
# was made by superstep with SQLite schema 3 (record format 1, before the store
# contract) from tests/data/legacy/legacy.lua; the v3-*.json files are what that
# build printed for it (the state's snapshot with the keys LangGraph's
# StateSnapshot added since: config, metadata, created_at, parent_config, and
# tasks as LangGraph shows them). This build migrates a copy of the file to its schema,
# prints the same state and history, lists its threads, checks it clean, and
# resumes its interrupted thread, writing records of the new format after the
# old ones (a chunked snapshot among them).
# Usage: test_legacy.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
bin=$(realpath "$1")
data="$2/tests/data/legacy"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

cp "$data/v3.db" old.db
script="$data/legacy.lua"

# same WANT_FILE CMD...: CMD's stdout must equal the file.
same() {
  local want=$1
  shift
  "$@" >got.json 2>err.txt || { fail "$* exited $?: $(cat err.txt)"; return; }
  cmp -s got.json "$want" || fail "$* differs from $(basename "$want"): $(diff <(tr ',' '\n' <"$want") <(tr ',' '\n' <got.json) | head -8)"
}

same "$data/v3-t1-state.json" "$bin" state "$script" --db old.db --thread t1 --json
same "$data/v3-t2-state.json" "$bin" state "$script" --db old.db --thread t2 --json
same "$data/v3-t1-history.json" "$bin" history "$script" --db old.db --thread t1 --json

out=$("$bin" threads "$script" --db old.db --json) || fail "threads: $out"
case $out in
  *'"thread_id":"t1"'*'"status":"idle"'*'"checkpoints":72,"latest":"01a205d0-f725-7005-849f-90a5473a0668","step":70'*) ;;
  *) fail "threads of the old file: $out" ;;
esac
out=$("$bin" check --db old.db 2>&1) || fail "check: $out"
case $out in *"72"*"0 problems"*|*"77 checkpoints checked, 0 problems"*) ;; *) fail "check: $out" ;; esac

# Resume t1: "ask" answers, the run completes on top of the old records.
out=$("$bin" run "$script" --db old.db --thread t1 --resume '"yes"' --json) || fail "resume: $out"
case $out in
  *'"status":"completed"'*'"answer":"yes"'*) ;;
  *) fail "resuming the old thread: $out" ;;
esac
case $out in *'"item 209"'*) ;; *) fail "the resumed state lost the old items: ${out:0:200}" ;; esac
# A new thread in the migrated file: 70 supersteps, so a snapshot with blobs.
out=$("$bin" run "$script" --db old.db --thread t3 --input '{}' --json 2>&1)
[ $? -eq 3 ] || fail "a new thread in the old file: $out"
n=$("$bin" state "$script" --db old.db --thread t3 --json | grep -o '"item [0-9]*"' | wc -l)
[ "$n" -eq 210 ] || fail "new thread state has $n items, want 210"
out=$("$bin" check --db old.db 2>&1) || fail "check after new writes: $out"
case $out in *" 0 problems"*) ;; *) fail "check after new writes: $out" ;; esac

if [ "$failures" -gt 0 ]; then
  echo "$failures legacy check(s) failed"
  exit 1
fi
echo "legacy: all checks passed"
