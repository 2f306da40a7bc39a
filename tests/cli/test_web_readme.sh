#!/usr/bin/env bash
# README's web page line, as written (./build/ replaced by the binary's folder):
# the main example run to its interrupt by `superstep run`, then served with
# --open. $BROWSER is a stand-in that records the address it is given; the test
# then loads that address (the page) and reads the thread through the API the
# page uses, as the page would show it.
# Usage: test_web_readme.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
pid=
cleanup() {
  [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
  rm -rf "$work"
  rm -f /tmp/superstep-web.db*
}
trap cleanup EXIT
line=$(sed -n 's/^    \(rm -f \/tmp\/superstep-web\.db\* .*--open\)$/\1/p' "$root/README.md")
[ -n "$line" ] || { echo "FAIL: README has no web page line (rm -f /tmp/superstep-web.db* ... --open)"; exit 1; }
mkdir -p "$work/build"
ln -s "$bin" "$work/build/superstep"
ln -s "$root/examples" "$work/examples"
printf '#!/bin/sh\necho "$1" > "%s/opened"\n' "$work" >"$work/browser"
chmod +x "$work/browser"
(cd "$work" && BROWSER="$work/browser" exec bash -c "$line") >"$work/out" 2>"$work/err" &
pid=$!
for _ in $(seq 1 200); do
  [ -s "$work/opened" ] && break
  sleep 0.1
done
fail=0
url=$(cat "$work/opened" 2>/dev/null)
[ "$url" = "http://127.0.0.1:8124/" ] || { echo "FAIL: --open should start \$BROWSER on http://127.0.0.1:8124/, got '$url'"; cat "$work/out" "$work/err"; exit 1; }
page=$(curl -sf "$url") || { echo "FAIL: GET $url"; fail=1; }
grep -q '<title>' <<<"$page" && grep -q '/ui/' <<<"$page" ||
  { echo "FAIL: the page at $url should be the web page (index.html)"; fail=1; }
T=00000000-0000-4000-8000-000000000002
threads=$(curl -sf "${url}threads/search" -H 'content-type: application/json' -d '{}')
grep -q "\"thread_id\":\"$T\"" <<<"$threads" && grep -q '"status":"interrupted"' <<<"$threads" ||
  { echo "FAIL: the thread the CLI ran should be listed as interrupted: $threads"; fail=1; }
history=$(curl -sf "${url}threads/$T/history" -H 'content-type: application/json' -d '{"limit":10}')
grep -q '"question":"publish the report?"' <<<"$history" ||
  { echo "FAIL: its history should show the pending interrupt: ${history:0:300}"; fail=1; }
grep -q '"next":\["approve"\]' <<<"$history" || { echo "FAIL: next should be approve"; fail=1; }
[ $fail = 0 ] && echo "README web page example: ok"
exit $fail
