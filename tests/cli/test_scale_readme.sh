#!/usr/bin/env bash
# README's many-processes example, as written (./build/ replaced by the
# binary's folder): a throwaway PostgreSQL, one API process, two workers, a
# run that stops at its interrupt, then the resume that finishes the report.
# Usage: test_scale_readme.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
bin=$(realpath "$1")
root=$(realpath "$2")
if [ ! -d /usr/lib/postgresql ]; then
  if [ "${SST_REQUIRE_POSTGRES:-0}" = 1 ]; then echo "FAIL: no PostgreSQL server installed"; exit 1; fi
  echo "PostgreSQL's server is not installed: skipped"; exit 0
fi
work=$(mktemp -d)
trap 'sh "$root/tests/pg/cluster.sh" stop /tmp/sst-pg >/dev/null 2>&1; rm -rf "$work"' EXIT
script=$(sed -n '/^    sh tests\/pg\/cluster.sh start \/tmp\/sst-pg/,/^    kill %1 %2 %3/p' "$root/README.md" | sed 's/^    //')
[ "$(wc -l <<<"$script")" -ge 6 ] || { echo "FAIL: README has no many-processes example"; exit 1; }
mkdir -p "$work/build" "$work/tests"
ln -s "$bin" "$work/build/superstep"
ln -s "$root/examples" "$work/examples"
ln -s "$root/tests/pg" "$work/tests/pg"
out=$(cd "$work" && timeout 120 bash -c "set -m; $script" 2>"$work/err")
echo "$out"
fail=0
grep -q '^{"__interrupt__":\[{"id":"[0-9a-f]*","value":{"notes":3,"question":"publish the report?"}}\]}$' \
  <<<"$out" || { echo "FAIL: the first run should stop at the interrupt"; cat "$work/err"; fail=1; }
grep -q '"approved":true,"report":"durable graphs: 3 notes from 1 sources"}$' <<<"$out" ||
  { echo "FAIL: the resume should finish the report"; fail=1; }
[ "$(grep -c 'superstep worker: stopped' "$work/err")" = 2 ] ||
  { echo "FAIL: both workers should stop cleanly"; cat "$work/err"; fail=1; }
[ $fail = 0 ] && echo "README many-processes example: ok"
exit $fail
