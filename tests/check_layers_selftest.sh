#!/usr/bin/env bash
# tools/check-layers.sh and tools/check-layers-symbols.sh must be able to fail: each
# case folder of CASES is a small repository; its file "expect" holds a line the check
# must print (and then fail), or "ok" (the check must pass). The check is run on the
# case folder, or with ARGS_DIR on ARGS_DIR/CASE.txt (for the symbols check: the list
# of the case's objects, which CMake builds and lists).
# Usage: tests/check_layers_selftest.sh CHECK_SH CASES_DIR [ARGS_DIR]
set -uo pipefail
check=$1 cases=$2 args=${3:-} failed=0 n=0
for dir in "$cases"/*/; do
  name=$(basename "$dir") want=$(cat "$dir/expect")
  n=$((n + 1))
  arg=$dir
  [ -z "$args" ] || arg=$args/$name.txt
  out=$(bash "$check" "$arg" 2>&1); rc=$?
  if [ "$want" = ok ]; then
    if [ $rc -ne 0 ]; then echo "FAIL $name: the check failed on a clean tree:"; echo "$out"; failed=1
    else echo "ok   $name: passes"; fi
  elif [ $rc -eq 0 ]; then
    echo "FAIL $name: the check passed; want a failure saying: $want"; failed=1
  elif ! grep -qF -- "$want" <<<"$out"; then
    echo "FAIL $name: the check failed without saying: $want"; echo "$out"; failed=1
  else
    echo "ok   $name: $want"
  fi
done
[ $n -gt 0 ] || { echo "no cases in $cases"; exit 1; }
exit $failed
