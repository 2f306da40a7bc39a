#!/usr/bin/env bash
# The 1 000-step stream of issue 37 on two builds, alternated: a runs/stream of
# "counter" (stream_mode updates) on `superstep serve --db FILE --workers 2`, in
# durability sync and async, as bench/durable/run.sh's stream phase, measured
# with bench_server_load --mode stream. Each round runs both builds in each mode,
# 3 streams each on a fresh server and database; the order of the builds swaps
# every round, so that a machine shared with others loads both alike.
#
#   bash bench/server/stream_ab.sh --a LABEL=SUPERSTEP --b LABEL=SUPERSTEP
#                                  [--load BENCH_SERVER_LOAD] [--rounds N] [--n STEPS]
#                                  [--json FILE]
#
# Prints, per mode and build, the median events/s (first update to the stream's
# end) and server CPU ms per stream (/proc, the whole stream), the ratio b/a and
# the 1-minute load average seen. Read the figures as ratios within one run.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
a="" b="" load=$root/build/plain/bench/bench_server_load rounds=3 n=1000 jsonout=""
while [ $# -gt 0 ]; do
  case "$1" in
    --a) a=$2; shift ;;
    --b) b=$2; shift ;;
    --load) load=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --n) n=$2; shift ;;
    --json) jsonout=$2; shift ;;
    *) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
[ -n "$a" ] && [ -n "$b" ] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
[ -x "$load" ] || { echo "stream_ab: no $load (build the target bench_server_load)" >&2; exit 1; }
command -v jq >/dev/null || { echo "stream_ab: needs jq" >&2; exit 1; }
graphs=$root/tests/server/langgraph.json
work=$(mktemp -d /tmp/sst-stream-ab-XXXXXX)
raw=$work/raw.jsonl
srv=""
cleanup() {
  if [ -n "$srv" ]; then kill "$srv" 2>/dev/null || true; wait "$srv" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

one() { # LABEL CLI MODE ROUND: one stream on a fresh server, a JSON line to $raw
  local label=$1 cli=$2 mode=$3 round=$4 port="" i out
  # serve.out too: the background job truncates it only once it has forked, so the
  # previous server's "listening on" line could otherwise be read as this one's port
  rm -f "$work"/s.db* "$work/serve.out"
  "$cli" serve "$graphs" --db "$work/s.db" --workers 2 --port 0 --quiet >"$work/serve.out" 2>&1 &
  srv=$!
  for i in $(seq 1 200); do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$work/serve.out" | head -1)
    [ -n "$port" ] && break
    kill -0 "$srv" 2>/dev/null || break
    sleep 0.05
  done
  [ -n "$port" ] || { cat "$work/serve.out" >&2; echo "stream_ab: $label did not start" >&2; exit 1; }
  out=$("$load" --url "http://127.0.0.1:$port" --durability "$mode" --pid "$srv" --mode stream --n "$n")
  kill "$srv"
  wait "$srv" 2>/dev/null || true
  srv=""
  echo "{\"tree\":\"$label\",\"mode\":\"$mode\",\"round\":$round,\"load\":$(cut -d' ' -f1 /proc/loadavg),\"r\":$out}" >>"$raw"
}

la=${a%%=*} ca=${a#*=} lb=${b%%=*} cb=${b#*=}
for round in $(seq 1 "$rounds"); do
  for mode in sync async; do
    if [ $((round % 2)) = 1 ]; then order="A B"; else order="B A"; fi
    for t in $order; do
      for k in 1 2 3; do
        if [ "$t" = A ]; then one "$la" "$ca" "$mode" "$round"; else one "$lb" "$cb" "$mode" "$round"; fi
      done
    done
  done
done
[ -z "$jsonout" ] || cp "$raw" "$jsonout"
jq -rs --arg a "$la" --arg b "$lb" '
  def median: sort | if length % 2 == 1 then .[length / 2 | floor]
                     else (.[length / 2 - 1] + .[length / 2]) / 2 end;
  def row($m; $t): [.[] | select(.mode == $m and .tree == $t)];
  . as $all
  | ["sync", "async"][] as $m
  | ($all | row($m; $a)) as $ra | ($all | row($m; $b)) as $rb
  | ($ra | map(.r.events_per_s_first_to_last) | median) as $ea
  | ($rb | map(.r.events_per_s_first_to_last) | median) as $eb
  | "\($m): \($a) \($ea | floor) events/s, \($ra | map(.r.server_cpu_ms) | median) ms CPU;"
    + " \($b) \($eb | floor) events/s, \($rb | map(.r.server_cpu_ms) | median) ms CPU;"
    + " \($b)/\($a) \(($eb / $ea * 100 | floor) / 100) (\($ra | length) + \($rb | length) streams,"
    + " load \([$ra[], $rb[]] | map(.load) | min)-\([$ra[], $rb[]] | map(.load) | max))"' "$raw"
