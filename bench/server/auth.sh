#!/usr/bin/env bash
# Users and ownership (docs/auth.md) against no auth, in one run (issue 38).
#
#   bash bench/server/auth.sh [--build DIR] [--secs S] [--rounds R] [--threads N] [--users U]
#                             [--jwt-build DIR] [--no-search]
#
# (a) runs/s: bench_server_load --mode chain (16 clients: POST /threads + runs/wait "chain")
#     on a server without auth and on one with JWT HS256 auth (every request verified,
#     every thread stamped and checked), alternating R rounds of S seconds each; the
#     ratio of the medians, and the server's CPU time per run (bench_server_load --pid).
#     --jwt-build DIR: a third server in each round, JWT auth served by the superstep of
#     another build (say, before a change to the auth path), so both are measured in
#     the same run against the same no-auth server. (b) thread search: N threads of U users written into the
#     SQLite file, then 200 sequential POST /threads/search {limit: 10} as one user (the
#     owner filter, served by the threads_owner index) and as the admin (no filter); the
#     median latencies. Both servers: tests/server's chain graph, --workers 2, a fresh
#     --db in /tmp. Default build: build/plain (RelWithDebInfo).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build/plain secs=5 rounds=3 nthreads=100000 nusers=1000 jwtbuild="" search=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build=$2; shift ;;
    --secs) secs=$2; shift ;;
    --rounds) rounds=$2; shift ;;
    --threads) nthreads=$2; shift ;;
    --users) nusers=$2; shift ;;
    --jwt-build) jwtbuild=$2; shift ;;
    --no-search) search=0 ;;
    *) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
  esac
  shift
done
cli=$build/superstep load=$build/bench/bench_server_load
work=$(mktemp -d /tmp/sst-bench-auth.XXXXXX)
SRV=""
trap '[ -n "$SRV" ] && kill $SRV 2>/dev/null; rm -rf "$work"' EXIT
export AUTH_JWT_SECRET=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
cat >"$work/auth.json" <<JSON
{"graphs": {"chain": "$root/tests/server/graphs/chain.lua"},
 "auth": {"jwt": {"algorithm": "HS256", "secret_env": "AUTH_JWT_SECRET"}}}
JSON
cat >"$work/none.json" <<JSON
{"graphs": {"chain": "$root/tests/server/graphs/chain.lua"}}
JSON
jwt() { # jwt SUB [PERMISSIONS-JSON]
  node -e 'const c=require("crypto"),b=(o)=>Buffer.from(JSON.stringify(o)).toString("base64url");
    const h=b({alg:"HS256",typ:"JWT"}),p=b({sub:process.argv[1],permissions:JSON.parse(process.argv[2]||"[]"),exp:Math.floor(Date.now()/1000)+3600});
    process.stdout.write(`${h}.${p}.${c.createHmac("sha256",process.env.AUTH_JWT_SECRET).update(h+"."+p).digest("base64url")}`)' "$@"
}
start() { # start CONFIG DB [CLI] -> SRV, URL
  "${3:-$cli}" serve "$1" --port 0 --db "$2" --workers 2 >"$work/out" 2>&1 &
  SRV=$!
  for _ in $(seq 100); do grep -q "listening on" "$work/out" && break; sleep 0.1; done
  URL=$(grep -o 'http://[0-9.:]*' "$work/out" | head -1)
}
stop() { kill "$SRV"; wait "$SRV" 2>/dev/null || true; SRV=""; }
TOKEN=$(jwt user-1)
rate() { sed -n 's/.*"runs_per_s": *\([0-9.]*\).*/\1/p' "$1"; }
cpu() { sed -n 's/.*"server_cpu_ms_per_run": *\([0-9.]*\).*/\1/p' "$1"; }
none=() auth=() other=() cnone=() cauth=() cother=()
load0=$(cut -d' ' -f1-3 /proc/loadavg)
arm() { # arm CONFIG DB CLI [BEARER] -> $work/load.json
  start "$1" "$2" "$3"
  "$load" --mode chain --conc 16 --secs "$secs" --url "$URL" --pid "$SRV" ${4:+--bearer "$4"} >"$work/load.json"
  stop
}
for r in $(seq "$rounds"); do
  arm "$work/none.json" "$work/none$r.db" "$cli"
  none+=("$(rate "$work/load.json")") cnone+=("$(cpu "$work/load.json")")
  arm "$work/auth.json" "$work/auth$r.db" "$cli" "$TOKEN"
  auth+=("$(rate "$work/load.json")") cauth+=("$(cpu "$work/load.json")")
  if [ -n "$jwtbuild" ]; then
    arm "$work/auth.json" "$work/other$r.db" "$jwtbuild/superstep" "$TOKEN"
    other+=("$(rate "$work/load.json")") cother+=("$(cpu "$work/load.json")")
  fi
done
median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
mn=$(median "${none[@]}") ma=$(median "${auth[@]}")
echo "load average (1, 5, 15 min): before $load0, after $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
echo "runs/s (chain, 16 clients): none ${none[*]} -> median $mn; JWT ${auth[*]} -> median $ma; ratio $(awk "BEGIN {printf \"%.3f\", $ma / $mn}")"
echo "server CPU ms per run: none ${cnone[*]} -> median $(median "${cnone[@]}"); JWT ${cauth[*]} -> median $(median "${cauth[@]}")"
if [ -n "$jwtbuild" ]; then
  mo=$(median "${other[@]}")
  echo "runs/s, JWT by $jwtbuild: ${other[*]} -> median $mo; ratio $(awk "BEGIN {printf \"%.3f\", $mo / $mn}"); server CPU ms per run ${cother[*]} -> median $(median "${cother[@]}")"
fi
[ "$search" = 1 ] || exit 0

# (b) thread search with an owner filter against none.
db=$work/search.db
start "$work/auth.json" "$db"
curl -s -X POST "$URL/threads" -H "authorization: Bearer $TOKEN" -H 'content-type: application/json' -d '{}' >/dev/null
stop
sqlite3 "$db" "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c WHERE i < $nthreads)
  INSERT INTO threads(thread, created, updated, metadata)
  SELECT printf('00000000-0000-4000-8000-%012d', i), 1700000000000 + i, 1700000000000 + i,
         json_object('owner', 'user-' || (i % $nusers)) FROM c;"
start "$work/auth.json" "$db"
ADMIN=$(jwt root '["admin"]')
node -e '
  const [url, user, admin] = process.argv.slice(1);
  async function lat(tok) {
    const t = [];
    for (let i = 0; i < 220; i++) {
      const s = performance.now();
      const r = await fetch(url + "/threads/search", { method: "POST", headers: { authorization: `Bearer ${tok}`, "content-type": "application/json" }, body: JSON.stringify({ limit: 10, offset: i % 5 }) });
      const j = await r.json();
      if (!Array.isArray(j) || j.length !== 10) throw new Error(JSON.stringify(j).slice(0, 200));
      if (i >= 20) t.push(performance.now() - s);
    }
    t.sort((a, b) => a - b);
    return t[t.length >> 1];
  }
  (async () => {
    await lat(user); // warm both
    const u = await lat(user), a = await lat(admin);
    console.log(`thread search, limit 10: as one user (owner filter) median ${u.toFixed(2)} ms; as the admin (no filter) median ${a.toFixed(2)} ms; ratio ${(u / a).toFixed(3)}`);
  })().catch((e) => { console.error(e); process.exit(1); });
' "$URL" "$(jwt user-7)" "$ADMIN"
stop
