#!/usr/bin/env bash
# The memory limit of Lua states from the command line: --memory-limit fails a
# node that allocates without bound (the process stays small), the thread
# keeps what committed and resumes in a new process, the flag wins over the
# script's compile{memory_limit}, the default is 1 GiB, and bad values are
# usage errors naming the option.
# Usage: test_memory_limit.sh SUPERSTEP_BINARY REPO_ROOT
# Runs are capped with ulimit -v so that a limit that does not work fails fast
# instead of taking the machine's memory, unless the binary cannot start so
# capped (sanitizers reserve terabytes of address space).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0
# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh" # expect_rc is redefined below, under the guard

guard="ulimit -v 2000000;" # KiB: about 2 GB of address space
if ! (eval "$guard"; exec "$bin" --version) >/dev/null 2>&1; then
  echo "note: $bin does not start under '$guard' (a sanitizer build?): no address-space cap"
  guard=""
fi
timer=()
if [ -x /usr/bin/time ]; then
  timer=(/usr/bin/time -f 'maxrss_kb=%M' -o "$work/time")
fi

# expect_rc WANT CMD...: runs CMD under the guard, keeps stdout/stderr in $out/$err.
expect_rc() {
  local want=$1; shift
  rm -f "$work/time"
  (eval "$guard"; exec "${timer[@]}" "$@") >"$work/out" 2>"$work/err"
  local rc=$?
  out=$(cat "$work/out"); err=$(cat "$work/err")
  if [ "$rc" != "$want" ]; then
    fail "'$*' exited $rc, expected $want; stderr: $err"
  fi
}

# "first" commits; "grow" builds a table of up to 3e8 integers (several GB)
# when $GROW is 1, giving up at 1 GiB so that a broken limit fails quickly.
cat >grow.lua <<'EOF'
local sst = superstep
local g = sst.StateGraph{ n = sst.reducers.replace, limit = sst.reducers.replace,
                          done = sst.reducers.replace }
g:add_node("first", function() return { n = 1, limit = sst.memory_limit() } end)
g:add_node("grow", function()
  if os.getenv("GROW") == "1" then
    local t = {}
    for i = 1, 300000000 do
      t[i] = i
      if i % 1000000 == 0 and collectgarbage("count") > 1024 * 1024 then
        error("grew past 1 GiB: the memory limit was not applied")
      end
    end
  end
  return { done = true }
end)
g:add_edge(sst.START, "first")
g:add_edge("first", "grow")
g:add_edge("grow", sst.END)
return g:compile{ memory_limit = tonumber(os.getenv("SCRIPT_LIMIT") or "") }
EOF

# The flag fails the growing node; its limit wins over the script's 8 GiB.
GROW=1 SCRIPT_LIMIT=8589934592 expect_rc 1 "$bin" run grow.lua --db m.db --thread t1 \
  --input '{}' --memory-limit 100M
contains "$err" "memory limit of 104857600 bytes exceeded" "the error names the limit"
contains "$err" "vertex 'grow' failed after 1 attempt" "the failure names the node, no retry"
if [ -f "$work/time" ]; then
  rss=$(sed -n 's/^maxrss_kb=//p' "$work/time")
  echo "peak RSS of the failing run: ${rss} KiB"
  if [ -n "$rss" ] && [ "$rss" -gt 1000000 ]; then
    fail "peak RSS ${rss} KiB is not well below 1 GB"
  fi
fi

# What committed is there, and a new process resumes the thread to the end.
expect_rc 0 "$bin" state grow.lua --db m.db --thread t1 --json
contains "$out" '"n":1' "the first node's update is committed"
contains "$out" '"limit":104857600' "the flag's limit applied in the node"
contains "$out" '"next":["grow"]' "grow is still to run"
lacks "$out" '"done"' "grow did not commit"
expect_rc 0 "$bin" run grow.lua --db m.db --thread t1 --memory-limit 100M --json
contains "$out" '"status":"completed"' "the resume completes"
contains "$out" '"done":true' "grow ran on resume"

# The default is 1 GiB; the script's compile{memory_limit} changes it; K, M, G suffixes.
expect_rc 0 "$bin" run grow.lua --db :memory: --input '{}' --json
contains "$out" '"limit":1073741824' "the default limit"
SCRIPT_LIMIT=200000000 expect_rc 0 "$bin" run grow.lua --db :memory: --input '{}' --json
contains "$out" '"limit":200000000' "compile{memory_limit}"
expect_rc 0 "$bin" run grow.lua --db :memory: --input '{}' --json --memory-limit 2048k
contains "$out" '"limit":2097152' "the K suffix"
expect_rc 0 "$bin" run grow.lua --db :memory: --input '{}' --json --memory-limit 2G
contains "$out" '"limit":2147483648' "the G suffix"
expect_rc 0 "$bin" run grow.lua --db :memory: --input '{}' --json --memory-limit 3000000
contains "$out" '"limit":3000000' "plain bytes"

# Bad values are usage errors that name the option.
for bad in abc 0 -5 10X 1.5G 99999999999999999999 99999999999G ""; do
  expect_rc 2 "$bin" run grow.lua --memory-limit "$bad"
  contains "$err" "--memory-limit" "bad value '$bad' names the option"
done
expect_rc 2 "$bin" run grow.lua --memory-limit
contains "$err" "--memory-limit" "a missing value names the option"

# superstep agent: the tools script's state has the limit too.
echo '{"content":"hi"}' >replies.jsonl
cat >tools.lua <<'EOF'
local t = {}
for i = 1, 30000000 do t[i] = i end
return {}
EOF
expect_rc 1 "$bin" agent --model fake:replies.jsonl --tools tools.lua --db :memory: \
  --memory-limit 8M "hello"
contains "$err" "memory limit of 8388608 bytes exceeded" "agent tools script"
expect_rc 2 "$bin" agent --model fake:replies.jsonl --memory-limit lots "hello"
contains "$err" "--memory-limit" "agent: a bad value names the option"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all memory limit checks passed"
