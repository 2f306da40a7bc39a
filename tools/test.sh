#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls this script).
#
# On Debian 12 as root it first installs what it needs. Then it builds and
# runs CTest three times:
#   build/test-plain  RelWithDebInfo, warnings as errors, every test
#   build/test-asan   AddressSanitizer + UndefinedBehaviorSanitizer, every test
#   build/test-tsan   ThreadSanitizer, the tests labelled "concurrency"
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends \
    build-essential cmake pkg-config libsqlite3-dev liblua5.4-dev libcurl4-openssl-dev python3 libcmocka-dev libjansson-dev clang-format sqlite3 time libmicrohttpd-dev curl \
    libpq-dev postgresql libgraphviz-dev chromium fonts-dejavu-core >/dev/null
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
# The MCP reference server (@modelcontextprotocol/server-everything, tests/mcp/package-lock.json)
# that the MCP client is tested against, over stdio and Streamable HTTP.
npm ci --prefix tests/mcp --no-audit --no-fund --loglevel=error >/dev/null
# OpenTelemetry's own OTLP definitions (tests/otlp/package-lock.json) decode what the exporter sends.
npm ci --prefix tests/otlp --no-audit --no-fund --loglevel=error >/dev/null

# The PostgreSQL tests start a throwaway server (tests/pg/cluster.sh): here they
# must run, never skip.
export SST_REQUIRE_POSTGRES=1

jobs=$(nproc 2>/dev/null || echo 2)
step() { # name ctest-args -- cmake-args...
  local name=$1 ctest_args=$2
  shift 3
  echo "== $name =="
  cmake -S . -B "build/test-$name" "$@" >/dev/null
  cmake --build "build/test-$name" -j "$jobs" >/dev/null
  (cd "build/test-$name" && ctest --output-on-failure -j "$jobs" $ctest_args)
}

step plain "" -- -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSST_WERROR=ON
step asan "-LE bench" -- -DCMAKE_BUILD_TYPE=Debug -DSST_SANITIZER=address,undefined \
  -DSST_WERROR=ON -DSST_BUILD_BENCH=OFF
step tsan "-L concurrency" -- -DCMAKE_BUILD_TYPE=Debug -DSST_SANITIZER=thread -DSST_WERROR=ON \
  -DSST_BUILD_BENCH=OFF -DSST_BUILD_EXAMPLES=OFF
echo "all test builds passed"
