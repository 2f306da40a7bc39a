#!/usr/bin/env bash
# Secrets stay out of everything superstep agent shows or stores: against an
# endpoint that quotes the request's Authorization header in its error body,
# the API key and the password of a base URL's user:password@ appear neither
# on stdout or stderr nor anywhere in the checkpoint database.
# Usage: test_secrets.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
server=
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null && wait "$server" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
failures=0
key=sk-test-SECRETKEY123
pass=secretpass
basic=$(printf 'user:%s' "$pass" | base64) # what curl sends for user:password@

fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect_rc WANT CMD...: runs CMD, keeps stdout/stderr in out.txt/err.txt (both in all.txt).
expect_rc() {
  local want=$1; shift
  "$@" >out.txt 2>err.txt
  local rc=$?
  cat out.txt err.txt >all.txt
  if [ "$rc" != "$want" ]; then
    fail "'$*' exited $rc, expected $want; stderr: $(cat err.txt)"
  fi
}
contains() { # FILE NEEDLE WHAT
  grep -qaF -- "$2" "$1" || fail "$3: '$2' not in $1: $(cat "$1")"
}
# no_secret WHAT FILE...: neither the key nor the password (nor its base64) in any FILE.
no_secret() {
  local what=$1; shift
  for f in "$@"; do
    [ -e "$f" ] || continue
    for s in "$key" SECRETKEY123 "$pass" "$basic"; do
      if grep -qaF -- "$s" "$f"; then
        fail "$what: '$s' leaked into $f:"
        tr -c '[:print:]\n' ' ' <"$f" |
          awk -v s="$s" 'n < 2 && (i = index($0, s)) { print "  ..." substr($0, i > 150 ? i - 150 : 1, 200); n++ }'
      fi
    done
  done
}
# check_db WHAT DB STORED: the database file, its WAL, and a full dump hold no secret;
# the dump holds STORED (the run's error, so the check did look at it).
check_db() {
  [ -s "$2" ] || fail "$1: no database $2"
  if command -v sqlite3 >/dev/null; then
    sqlite3 "$2" .dump >"$2.dump" 2>&1 || fail "$1: sqlite3 $2 .dump failed"
    contains "$2.dump" "$3" "$1: the error is stored"
  fi
  no_secret "$1" "$2" "$2-wal" "$2-journal" "$2.dump"
}

python3 "$root/tests/agent/openai_server.py" >port.txt 2>server.err &
server=$!
# The server prints its port once it listens; the bound only catches a server that never starts.
for _ in $(seq 1 6000); do
  [ -s port.txt ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
port=$(head -1 port.txt)
if [ -z "$port" ]; then
  echo "FAIL: the test server did not start: $(cat server.err)"
  exit 1
fi
base=http://127.0.0.1:$port/v1

# The key, echoed back in a 401 body (permanent) and a 500 body (retried), human and JSON output.
export SST_SECRET_KEY=$key
for model in echo-auth echo-auth-500; do
  for json in "" --json; do
    db=key-$model$json.db
    expect_rc 1 "$bin" agent --model "$base" --model-name "$model" --api-key-env SST_SECRET_KEY \
      --db "$db" --thread t $json "hello"
    contains all.txt "answered HTTP" "$model$json: the HTTP error is reported"
    contains all.txt "Bearer [redacted]" "$model$json: the echoed header is masked"
    no_secret "$model$json" out.txt err.txt
    check_db "$model$json" "$db" "Bearer [redacted]"
  done
done
unset SST_SECRET_KEY

# A base URL with user:password@, against the echoing endpoint and against a closed port.
userbase=http://user:$pass@127.0.0.1:$port/v1
for model in echo-auth echo-auth-500; do
  db=userinfo-$model.db
  expect_rc 1 "$bin" agent --model "$userbase" --model-name "$model" --api-key-env SST_NO_KEY \
    --db "$db" --thread t "hello"
  contains all.txt "$base/chat/completions" "$model: the URL is shown without its user info"
  contains all.txt "Basic [redacted]" "$model: the credentials were sent, and masked"
  no_secret "userinfo $model" out.txt err.txt
  check_db "userinfo $model" "$db" "Basic [redacted]"
done
expect_rc 1 "$bin" agent --model "http://user:$pass@127.0.0.1:9/v1" --api-key-env SST_NO_KEY \
  --db refused.db --thread t --json "hello"
contains all.txt "http://127.0.0.1:9/v1/chat/completions" "refused: the URL without user info"
no_secret "refused" out.txt err.txt
check_db "refused" refused.db "http://127.0.0.1:9/v1/chat/completions"
# A model spec that is not understood is echoed without its user info.
expect_rc 1 "$bin" agent --model "ftp://user:$pass@127.0.0.1:9/v1" --db :memory: "hello"
contains all.txt "ftp://127.0.0.1:9/v1" "bad spec: shown without user info"
no_secret "bad spec" out.txt err.txt

if [ "$failures" -ne 0 ]; then
  echo "$failures secrets check(s) failed"
  exit 1
fi
echo "all secrets checks passed"
