#!/usr/bin/env bash
# README's `superstep serve` line, as written (./build/ replaced by the
# binary's folder): the main example served over HTTP, a run that stops at
# its interrupt, then the resume that finishes the report.
# Usage: test_serve_readme.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"; rm -f /tmp/superstep-serve.db*' EXIT
line=$(sed -n 's/^    \(\.\/build\/superstep serve --graph research.*\)$/\1/p' "$root/README.md")
[ -n "$line" ] || { echo "FAIL: README has no 'superstep serve --graph research' line"; exit 1; }
mkdir -p "$work/build"
ln -s "$bin" "$work/build/superstep"
ln -s "$root/examples" "$work/examples"
rm -f /tmp/superstep-serve.db*
out=$(cd "$work" && timeout 60 bash -c "$line" 2>"$work/err")
echo "$out"
fail=0
grep -q '^{"__interrupt__":\[{"id":"[0-9a-f]*","value":{"notes":3,"question":"publish the report?"}}\]}$' \
  <<<"$out" || { echo "FAIL: the first run should stop at the interrupt"; fail=1; }
grep -q '"approved":true,"report":"durable graphs: 3 notes from 1 sources"}$' <<<"$out" ||
  { echo "FAIL: the resume should finish the report"; fail=1; }
grep -q 'stopped' "$work/err" || { echo "FAIL: the server should stop cleanly"; cat "$work/err"; fail=1; }
[ $fail = 0 ] && echo "README serve example: ok"
exit $fail
