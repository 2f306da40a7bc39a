#!/bin/sh
# A throwaway PostgreSQL cluster on 127.0.0.1 for the tests (CTest fixture "pg",
# tests/CMakeLists.txt): initdb in DIR, started on a free random port, stopped
# and removed afterwards. As root it runs the server as the postgres user. The
# cluster itself lives in a new directory under /tmp (the postgres user may not
# reach DIR), named in DIR/cluster.
#
#   cluster.sh start DIR   writes DIR/url (postgresql://postgres@127.0.0.1:PORT/postgres)
#   cluster.sh stop DIR    stops the server and removes DIR
#   cluster.sh restart DIR stops it with -m immediate and starts it again (same port),
#                          after SST_PG_DOWN_S seconds (default 0)
#
# fsync is off (a test server need not survive a power cut) unless SST_PG_FSYNC=on
# (benchmarks).
#
# Without PostgreSQL's server binaries it writes no url and succeeds, so the tests
# skip their PostgreSQL cases with a message, unless SST_REQUIRE_POSTGRES=1 (CI
# sets it through tools/test.sh): then it fails.
set -eu
cmd=${1:?usage: cluster.sh start|stop|restart DIR}
dir=${2:?usage: cluster.sh start|stop|restart DIR}
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}
cl=$(cat "$dir/cluster" 2>/dev/null || true)
stop() {
  if [ -n "$pgbin" ] && [ -n "$cl" ] && [ -f "$cl/data/postmaster.pid" ]; then
    as_pg "$pgbin/pg_ctl" -D "$cl/data" -m immediate -w stop >/dev/null 2>&1 || true
  fi
}
launch() { # port
  as_pg "$pgbin/pg_ctl" -D "$cl/data" -l "$cl/server.log" -w -t 30 \
    -o "-p $1 -k $cl -c listen_addresses=127.0.0.1 -c fsync=${SST_PG_FSYNC:-off} -c max_connections=300" \
    start >/dev/null 2>&1
}
case $cmd in
start)
  stop
  if [ -n "$cl" ]; then rm -rf "$cl"; fi
  rm -rf "$dir"
  mkdir -p "$dir"
  if [ -z "$pgbin" ] || [ ! -x "$pgbin/initdb" ]; then
    if [ "${SST_REQUIRE_POSTGRES:-0}" = 1 ]; then
      echo "cluster.sh: PostgreSQL's server is not installed (/usr/lib/postgresql/*/bin) and SST_REQUIRE_POSTGRES=1" >&2
      exit 1
    fi
    echo "cluster.sh: PostgreSQL's server is not installed: the PostgreSQL tests will skip"
    exit 0
  fi
  cl=$(mktemp -d /tmp/sst-pg.XXXXXX)
  echo "$cl" >"$dir/cluster"
  if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$cl"; fi
  as_pg "$pgbin/initdb" -D "$cl/data" -U postgres -A trust -E UTF8 --no-locale --no-sync \
    >"$cl/initdb.log" 2>&1 || { cat "$cl/initdb.log" >&2; exit 1; }
  tries=0
  while :; do
    port=$((20000 + $(od -An -N2 -tu2 /dev/urandom | tr -d ' ') % 20000))
    if launch "$port"; then break; fi
    tries=$((tries + 1))
    if [ $tries -ge 8 ]; then
      echo "cluster.sh: the server did not start; its log:" >&2
      cat "$cl/server.log" >&2 || true
      exit 1
    fi
  done
  echo "$port" >"$dir/port"
  echo "postgresql://postgres@127.0.0.1:$port/postgres" >"$dir/url"
  echo "cluster.sh: PostgreSQL $("$pgbin/postgres" --version | awk '{print $3}') on 127.0.0.1:$port ($cl)"
  ;;
restart)
  stop
  sleep "${SST_PG_DOWN_S:-0}"
  launch "$(cat "$dir/port")"
  ;;
stop)
  stop
  if [ -n "$cl" ]; then rm -rf "$cl"; fi
  rm -rf "$dir"
  ;;
*)
  echo "usage: cluster.sh start|stop|restart DIR" >&2
  exit 2
  ;;
esac
