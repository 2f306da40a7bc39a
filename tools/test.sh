#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script).
#
# On Debian 12 as root it first installs what it needs. Then it builds and
# runs CTest three times (docs/testing.md, "Where tests run"):
#   build/test-plain  RelWithDebInfo, warnings as errors, every test but the
#                     small versions of the chaos tests (label "small")
#   build/test-asan   AddressSanitizer + UndefinedBehaviorSanitizer, every test
#                     but labels "bench" and "chaos" (the "small" versions instead)
#   build/test-tsan   ThreadSanitizer, the tests labelled "concurrency" but not "chaos"
# and prints the ten slowest tests of each build.
#
# Options (none: what CI runs):
#   --under-load   run the tests while one busy loop per core keeps every core busy
#   --repeat N     build once, then run the tests N times; stop at the first failure
#   --only NAME    one build only: plain, asan or tsan (may be given more than once)
#   -h, --help     this text
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
die() { echo "tools/test.sh: $*" >&2; echo "run bash tools/test.sh --help" >&2; exit 2; }
under_load=0
repeat=1
only=()
while [ $# -gt 0 ]; do
  case $1 in
    --under-load) under_load=1 ;;
    --repeat) [ $# -ge 2 ] || die "--repeat needs a count"; repeat=$2; shift ;;
    --repeat=*) repeat=${1#*=} ;;
    --only) [ $# -ge 2 ] || die "--only needs plain, asan or tsan"; only+=("$2"); shift ;;
    --only=*) only+=("${1#*=}") ;;
    -h | --help) usage; exit 0 ;;
    *) die "unknown option $1" ;;
  esac
  shift
done
[[ $repeat =~ ^[1-9][0-9]*$ ]] || die "--repeat $repeat: want a count of 1 or more"
for b in ${only[@]+"${only[@]}"}; do
  case $b in plain | asan | tsan) ;; *) die "--only $b: want plain, asan or tsan" ;; esac
done
wanted() { [ ${#only[@]} = 0 ] || [[ " ${only[*]} " == *" $1 "* ]]; }

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends \
    build-essential cmake pkg-config libsqlite3-dev liblua5.4-dev libcurl4-openssl-dev python3 libcmocka-dev libjansson-dev clang-format sqlite3 time libmicrohttpd-dev curl \
    libpq-dev postgresql libgraphviz-dev libssl-dev chromium fonts-dejavu-core \
    python3-dev python3-pytest python3-setuptools python3-pip >/dev/null
  # Node.js runs LangGraph's own JS SDK against `superstep serve` (tests/server).
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    apt-get install -y -qq --no-install-recommends nodejs npm >/dev/null
  fi
fi
# LangGraph's JS SDK, pinned (tests/server/package-lock.json), from the npm registry.
npm ci --prefix tests/server --no-audit --no-fund --loglevel=error >/dev/null
# puppeteer-core, pinned (tests/web/package-lock.json), drives Debian's chromium (never a
# downloaded browser) against the web page.
npm ci --prefix tests/web --no-audit --no-fund --loglevel=error >/dev/null
# LangGraph.js's own dev server (@langchain/langgraph-api/-cli, tests/web/peer/package-lock.json)
# that the useStream page is compared against.
npm ci --prefix tests/web/peer --no-audit --no-fund --loglevel=error >/dev/null
# The same dev server again (tests/server/auth_peer/package-lock.json) with the example auth
# written as its Auth class, compared with superstep serve case by case (test_server_auth_peer).
npm ci --prefix tests/server/auth_peer --no-audit --no-fund --loglevel=error >/dev/null
# The MCP reference server (@modelcontextprotocol/server-everything, tests/mcp/package-lock.json)
# that the MCP client is tested against, over stdio and Streamable HTTP.
npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error >/dev/null
# OpenTelemetry's own OTLP definitions (tests/otlp/package-lock.json) decode what the exporter sends.
npm ci --prefix tests/otlp --no-audit --no-fund --loglevel=error >/dev/null

# The PostgreSQL tests start a throwaway server (tests/pg/cluster.sh): here they
# must run, never skip.
export SST_REQUIRE_POSTGRES=1

jobs=$(nproc 2>/dev/null || echo 2)
# Most tests wait (on servers, child processes, sleeps) more than they compute: with one
# test per core the cores were busy 40 % of the time. Two tests per core keep them busy.
test_jobs=$((jobs * 2))
start=$SECONDS
names=() ctest_args=()
build() { # name ctest-args -- cmake-args...
  local name=$1 args=$2
  shift 3
  wanted "$name" || return 0
  local t=$SECONDS
  echo "== $name: build =="
  cmake -S . -B "build/test-$name" "$@" >/dev/null
  cmake --build "build/test-$name" -j "$jobs" >/dev/null
  echo "   built in $((SECONDS - t)) s"
  names+=("$name")
  ctest_args+=("$args")
}
build plain "-LE ^small$" -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSST_WERROR=ON
build asan "-LE ^(bench|chaos)$" -- -DCMAKE_BUILD_TYPE=Debug -DSST_SANITIZER=address,undefined \
  -DSST_WERROR=ON -DSST_BUILD_BENCH=OFF
build tsan "-L ^concurrency$ -LE ^chaos$" -- -DCMAKE_BUILD_TYPE=Debug -DSST_SANITIZER=thread \
  -DSST_WERROR=ON -DSST_BUILD_BENCH=OFF -DSST_BUILD_EXAMPLES=OFF

# --under-load: one busy loop per core, for as long as the tests run; killed on
# any exit (a failure, ^C, a kill), never left behind.
hogs=()
stop_load() {
  [ ${#hogs[@]} = 0 ] && return 0
  kill "${hogs[@]}" 2>/dev/null || true
  wait "${hogs[@]}" 2>/dev/null || true
  hogs=()
}
trap stop_load EXIT
trap 'stop_load; trap - INT; kill -INT $$' INT
trap 'stop_load; exit 143' TERM
if [ $under_load = 1 ]; then
  for _ in $(seq "$jobs"); do
    # A busy loop that also ends when this script is gone (even after a kill -9).
    sh -c 'while kill -0 "$1" 2>/dev/null; do :; done' hog $$ &
    hogs+=($!)
  done
  echo "== under load: $jobs busy loops (pids ${hogs[*]}) =="
fi

# Each test's time, per build: "seconds name build round" lines.
times=$(mktemp)
trap 'stop_load; rm -f "$times"' EXIT
for round in $(seq "$repeat"); do
  for i in "${!names[@]}"; do
    name=${names[$i]}
    [ "$repeat" = 1 ] && echo "== $name: test ==" || echo "== $name: test (round $round of $repeat) =="
    t=$SECONDS
    log=build/test-$name/ctest.log
    # shellcheck disable=SC2086 # the label options are words
    if ! (cd "build/test-$name" && ctest --output-on-failure -j "$test_jobs" ${ctest_args[$i]}) 2>&1 |
      tee "$log"; then
      fail=1
    else
      fail=0
    fi
    sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([^ ]*\) .* \([0-9.]*\) sec$/\2 \1/p' "$log" |
      while read -r secs test; do echo "$secs $test $name $round"; done >>"$times"
    echo "   $name tests took $((SECONDS - t)) s"
    if [ $fail = 1 ]; then
      echo "tools/test.sh: FAILED in round $round of $repeat, build $name (log: $log)" >&2
      exit 1
    fi
  done
done
stop_load

echo "== the ten slowest tests of each build (seconds; the slowest round of $repeat) =="
for name in "${names[@]}"; do
  awk -v b="$name" '$3 == b && $1 > max[$2] { max[$2] = $1 } END { for (t in max) print max[t], t }' \
    "$times" | sort -rn | head -10 | awk -v b="$name" '{ printf "  %-6s %7.1f  %s\n", b, $1, $2 }'
done
echo "all test builds passed in $((SECONDS - start)) s$([ $under_load = 1 ] && echo ' (under load)')"
