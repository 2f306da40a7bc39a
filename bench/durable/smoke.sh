#!/bin/sh
# ctest bench_durable_smoke_MODE: a few runs of the chain through bench_durable in
# one durability mode on a fresh SQLite file, 4 threads; its JSON must count
# them all. Also checks that run.sh parses (bash -n); the run itself needs a
# PostgreSQL server and DBOS's npm packages, and takes minutes (README.md).
#   smoke.sh BENCH_DURABLE MODE
set -eu
bin=${1:?usage: smoke.sh BENCH_DURABLE MODE}
mode=${2:?usage: smoke.sh BENCH_DURABLE MODE}
bash -n "$(dirname "$0")/run.sh"
dir=$(mktemp -d /tmp/sst-durable-smoke.XXXXXX)
trap 'rm -rf "$dir"' EXIT
out=$("$bin" --db "$dir/smoke.db" --threads 4 --runs 40 --warmup 2 --mode "$mode")
echo "$out"
case $out in
  *"\"mode\":\"$mode\""*"\"runs\":40,"*) ;;
  *) echo "smoke.sh: expected 40 runs in mode $mode" >&2; exit 1 ;;
esac
