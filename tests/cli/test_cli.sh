#!/usr/bin/env bash
# Drives the real superstep binary: exit codes, JSON output, resume in a
# second process, fork, streaming, and the message of every bad input.
# Usage: test_cli.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
root=$(realpath "$2")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
script=$root/examples/lua/research.lua
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

# A run that stops at the approval interrupt, then a second process resumes it.
expect_rc 3 "$bin" run "$script" --db r.db --thread t1 --input '{"topic":"durable graphs"}' --json
contains "$out" '"status":"interrupted"' "interrupted status"
contains "$out" '"question":"publish the report?"' "interrupt value"
contains "$out" '"thread_id":"t1"' "thread id in JSON"
cid=$(grep -o '"checkpoint_id":"[^"]*"' <<<"$out" | cut -d'"' -f4)
expect_rc 0 "$bin" run "$script" --db r.db --thread t1 --resume '"yes"' --json
contains "$out" '"status":"completed"' "completed after resume"
contains "$out" '"report":"durable graphs: 3 notes from 1 sources"' "report after resume"

# Human output: state on stdout, a summary on stderr; a new thread id is printed.
expect_rc 3 "$bin" run "$script" --db r.db --input '{"topic":"x"}'
contains "$err" "thread " "new thread id printed"
contains "$err" "resume with: superstep run" "resume hint"
contains "$out" '"topic": "x"' "pretty state"

# state and history
expect_rc 0 "$bin" state "$script" --db r.db --thread t1 --json
contains "$out" '"report":"durable graphs: 3 notes from 1 sources"' "state values"
expect_rc 0 "$bin" history "$script" --db r.db --thread t1 --json
n=$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)
[ "$n" -ge 5 ] || fail "history has $n checkpoints"

# history pages: metadata and what changed by default, --limit/--before, --values
python3 -c 'import json,sys; json.load(sys.stdin)' <<<"$out" || fail "history is not one JSON array"
contains "$out" '"updates":[' "history shows each checkpoint's updates"
expect_rc 0 "$bin" history "$script" --db r.db --thread t1 --json --limit 2
[ "$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)" = 2 ] || fail "--limit 2: $out"
second=$(grep -o '"checkpoint_id":"[^"]*"' <<<"$out" | sed -n 2p | cut -d'"' -f4)
expect_rc 0 "$bin" history "$script" --db r.db --thread t1 --json --before "$second"
all=$("$bin" history "$script" --db r.db --thread t1 --json | grep -o '"checkpoint_id":"[^"]*"' | wc -l)
[ "$(grep -o '"checkpoint_id"' <<<"$out" | wc -l)" = $((all - 2)) ] || fail "--before: $out"
expect_rc 0 "$bin" history "$script" --db r.db --thread t1 --json --limit 1 --values
contains "$out" '"values":{' "--values prints whole states"
expect_rc 2 "$bin" history "$script" --db r.db --thread t1 --limit 0
contains "$err" "--limit: expected a number above 0" "bad --limit"

# superstep check: a clean file, then a damaged record (its checksum no longer matches)
expect_rc 0 "$bin" check --db r.db
contains "$out" "0 problems found" "check on a clean file"
cp r.db dmg.db; cp r.db-wal dmg.db-wal 2>/dev/null
sqlite3 dmg.db "UPDATE checkpoints SET body = replace(body, 'durable', 'DURABLE') WHERE seq = (SELECT max(seq) FROM checkpoints WHERE thread='t1')" || fail "sqlite3 update"
expect_rc 1 "$bin" state "$script" --db dmg.db --thread t1
contains "$err" "of thread 't1' is damaged (checksum mismatch)" "a damaged record is a named error"
expect_rc 1 "$bin" run "$script" --db dmg.db --thread t1
contains "$err" "damaged" "run names the damage"
case "$err" in *"unknown thread"*) fail "a damaged record reported as an unknown thread" ;; esac
expect_rc 1 "$bin" check --db dmg.db
contains "$out" "damaged: thread 't1' checkpoint" "check lists the damaged checkpoint"
expect_rc 0 "$bin" check --db dmg.db --repair
contains "$out" "repaired: 1 thread moved back to an intact checkpoint" "repair"
ls dmg.db.bak-* >/dev/null 2>&1 || fail "no backup copy before repair"
expect_rc 0 "$bin" state "$script" --db dmg.db --thread t1 --json
contains "$out" '"checkpoint_id"' "readable after repair"
expect_rc 1 "$bin" check --db nonexistent-dir/x.db
contains "$err" "nonexistent-dir/x.db" "check names a file it cannot open"

# threads: every thread of the database, sorted by id
expect_rc 0 "$bin" threads "$script" --db r.db --json
contains "$out" '[{"thread_id":"' "threads JSON"
contains "$out" '"thread_id":"t1","created_at":' "thread t1 listed"
contains "$out" '"status":"interrupted"' "an interrupted thread's status"
contains "$out" '"status":"idle"' "a finished thread's status"
expect_rc 0 "$bin" threads "$script" --db r.db
contains "$out" "CHECKPOINTS" "threads table header"
contains "$out" "interrupted" "threads table status"

# Fork: from the checkpoint that waited for approval ($cid, taken from the
# interrupted run), answer "no" this time.
[ -n "$cid" ] || fail "found the checkpoint before approval"
expect_rc 0 "$bin" run "$script" --db r.db --thread t1 --checkpoint "$cid" --resume '"no"' --json
contains "$out" '"report":"not approved"' "fork answers differently"
expect_rc 0 "$bin" history "$script" --db r.db --thread t1 --json
contains "$out" '"report":"durable graphs: 3 notes from 1 sources"' "original history intact"

# Streaming: JSON lines on stdout.
expect_rc 3 "$bin" run "$script" --db s.db --thread s1 --input '{"topic":"s"}' --stream updates
contains "$out" '{"plan":{"questions":["s: history"' "plan's update streamed"
contains "$out" '{"research":{"notes":["notes on s: costs"]}}' "research updates streamed"
lines=$(wc -l <<<"$out")
[ "$lines" -ge 4 ] || fail "stream printed $lines lines"

# On a terminal (a pty from script(1)), a progress line goes to stderr.
if command -v script >/dev/null; then
  script -qec "'$bin' run '$script' --db p.db --thread p1 --input '{\"topic\":\"p\"}' >/dev/null" \
    /dev/null >"$work/pty" 2>&1
  contains "$(cat "$work/pty")" "superstep 0  2 tasks" "progress line on a terminal"
fi

# Workers: the same final state with 2 workers as with 1.
expect_rc 3 "$bin" run "$script" --db w.db --thread w1 --input '{"topic":"w"}' --json --workers 1
one=$out
expect_rc 3 "$bin" run "$script" --db w.db --thread w2 --input '{"topic":"w"}' --json --workers 2
two=${out//\"thread_id\":\"w2\"/\"thread_id\":\"w1\"}
[ "$(sed 's/"checkpoint_id":"[^"]*"//; s/"id":"[^"]*"//' <<<"$one")" = \
  "$(sed 's/"checkpoint_id":"[^"]*"//; s/"id":"[^"]*"//' <<<"$two")" ] ||
  fail "2 workers differ from 1: $one vs $two"

# --db :memory: runs without a file
expect_rc 0 "$bin" run "$root/examples/lua/w1_loop.lua" --db :memory: --input '{"counter":0,"n":50}' --json
contains "$out" '"state":{"counter":50,"n":50}' "in-memory run"
[ ! -e ":memory:" ] || fail "--db :memory: created a file"

# graph
expect_rc 0 "$bin" graph "$script" --mermaid
contains "$out" "research & fetch --> approve" "mermaid join"
expect_rc 0 "$bin" graph "$script" --dot
contains "$out" "digraph" "dot"
# --svg: the same DOT laid out by Graphviz; one <g class="node"> per node, named by <title>.
expect_rc 0 "$bin" graph "$script" --svg
contains "$out" "<svg width=" "svg"
for node in __start__ plan research fetch approve report __end__; do
  contains "$out" "<title>$node</title>" "svg node $node"
done
n_nodes=$(grep -c '<g id="node[0-9]*" class="node">' <<<"$out")
[ "$n_nodes" = 8 ] || { echo "FAIL: svg: expected 8 nodes (7 and the join point), got $n_nodes"; failures=$((failures + 1)); }

# Bad inputs: one line naming the problem, never a crash.
expect_rc 1 "$bin" run missing.lua
contains "$err" "cannot open script 'missing.lua'" "missing file"
printf 'local g = superstep.StateGraph{}\nlocal x = = 2\n' >syntax.lua
expect_rc 1 "$bin" run syntax.lua
contains "$err" "syntax.lua:2:" "syntax error line"
expect_rc 2 "$bin" run "$script" --frobnicate
contains "$err" "unknown option '--frobnicate'" "unknown flag"
expect_rc 2 "$bin" launch "$script"
contains "$err" "unknown command 'launch'" "unknown command"
expect_rc 2 "$bin" run "$script" --workers zero
contains "$err" "--workers: expected a number" "bad workers"
expect_rc 2 "$bin" run "$script" --stream loud
contains "$err" "unknown mode 'loud'" "bad stream mode"
contains "$err" "messages" "the stream modes are listed"
expect_rc 2 "$bin" state "$script"
contains "$err" "--thread ID is required" "state needs a thread"
expect_rc 1 "$bin" run "$script" --db r.db --input '{"topic": tru}'
contains "$err" "--input: bad JSON at line 1, column 11" "bad JSON position"
echo '{"topic": [1,' >bad.json
expect_rc 1 "$bin" run "$script" --db r.db --input @bad.json
contains "$err" "--input: bad JSON" "bad JSON file"
expect_rc 1 "$bin" run "$script" --db r.db --thread nobody
contains "$err" "unknown thread 'nobody'" "unknown thread (run)"
expect_rc 1 "$bin" state "$script" --db r.db --thread nobody
contains "$err" "unknown thread 'nobody'" "unknown thread (state)"
expect_rc 1 "$bin" run "$script" --db r.db --thread t1 --checkpoint no-such-id --resume '"yes"'
contains "$err" "unknown checkpoint 'no-such-id'" "unknown checkpoint"
echo "not a database, just text that is long enough to fill a header page......" >junk.db
expect_rc 1 "$bin" run "$script" --db junk.db --input '{"topic":"x"}'
contains "$err" "junk.db" "corrupt database named"
printf 'return 42\n' >ret.lua
expect_rc 1 "$bin" run ret.lua
contains "$err" "must return a StateGraph" "script returns something else"
printf 'local g = superstep.StateGraph{}\ng:add_node("a", function() error("kaboom") end, {retry = {max_attempts = 1}})\ng:add_edge(superstep.START, "a")\nreturn g\n' >boom.lua
expect_rc 1 "$bin" run boom.lua --db r.db --input '{}'
contains "$err" "kaboom" "node error message"
expect_rc 1 "$bin" run boom.lua --db r.db --input '{}' --json
contains "$out" '"status":"error"' "JSON error status"
expect_rc 0 "$bin" --help
contains "$out" "exit codes" "help"

# superstep agent: the scripted model with Lua tools, two turns on one thread.
cat >replies1.jsonl <<'JSONL'
{"content":"Let me add those.","tool_calls":[{"id":"c1","type":"function","function":{"name":"add","arguments":"{\"a\":2,\"b\":40}"}},{"id":"c2","type":"function","function":{"name":"upper","arguments":"{\"s\":\"hi\"}"}}]}
{"content":"The answer is 42."}
JSONL
cat >replies2.jsonl <<'JSONL'
{"content":"You are welcome."}
JSONL
cat >tools.lua <<'LUA'
return {
  { name = "add", description = "Adds two integers.",
    parameters = { type = "object", properties = { a = { type = "integer" }, b = { type = "integer" } },
                   required = { "a", "b" } },
    fn = function(args) return args.a + args.b end },
  { name = "upper", description = "Upper-cases.",
    parameters = { type = "object", properties = { s = { type = "string" } }, required = { "s" } },
    fn = function(args) return string.upper(args.s) end },
}
LUA
expect_rc 0 "$bin" agent --model fake:replies1.jsonl --tools tools.lua --db a.db --thread chat "What is 2 + 40?"
contains "$out" "Let me add those.The answer is 42." "agent streams the tokens"
expect_rc 0 "$bin" agent --model fake:replies2.jsonl --tools tools.lua --db a.db --thread chat --json "Thanks"
contains "$out" '"reply":"You are welcome."' "agent second turn"
contains "$out" '"role":"tool","tool_call_id":"c1","name":"add","content":"42"' "tool result in the thread"
contains "$out" '"role":"tool","tool_call_id":"c2","name":"upper","content":"HI"' "the second tool's result"
contains "$out" '"content":"What is 2 + 40?"' "first turn kept"

# Without --thread, run and agent make the same kind of id: a new UUIDv7 every time
# (two agents in a row never share a thread, as agent-<pid> could after pid reuse).
uuid7='^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$'
thread_of() { grep -o '"thread_id":"[^"]*"' <<<"$1" | cut -d'"' -f4; }
expect_rc 0 "$bin" agent --model fake:replies2.jsonl --db ids.db --json "one"
id1=$(thread_of "$out")
expect_rc 0 "$bin" agent --model fake:replies2.jsonl --db ids.db --json "two"
id2=$(thread_of "$out")
[[ $id1 =~ $uuid7 ]] || fail "agent's new thread id is not a UUIDv7: '$id1'"
[[ $id2 =~ $uuid7 ]] || fail "agent's new thread id is not a UUIDv7: '$id2'"
[ "$id1" != "$id2" ] || fail "two agent runs share the thread id '$id1'"
printf '%s\n%s\n' "$id1" "$id2" | LC_ALL=C sort -C || fail "thread ids do not sort in start order: $id1, $id2"
expect_rc 3 "$bin" run "$script" --db ids.db --input '{"topic":"x"}' --json
id3=$(thread_of "$out")
[[ $id3 =~ $uuid7 ]] || fail "run's new thread id is not a UUIDv7: '$id3'"

# One database lookup for run, agent and check: --db, else $SUPERSTEP_DB, else ./superstep.db.
mkdir dbs && cd dbs
expect_rc 0 env SUPERSTEP_DB=env.db "$bin" agent --model fake:../replies2.jsonl "hi"
[ -f env.db ] || fail "agent did not use \$SUPERSTEP_DB"
expect_rc 0 env SUPERSTEP_DB=env.db "$bin" check
contains "$out" "env.db: " "check uses \$SUPERSTEP_DB"
expect_rc 3 env SUPERSTEP_DB=run.db "$bin" run "$script" --input '{"topic":"x"}'
[ -f run.db ] || fail "run did not use \$SUPERSTEP_DB"
expect_rc 0 env -u SUPERSTEP_DB "$bin" agent --model fake:../replies2.jsonl "hi"
[ -f superstep.db ] || fail "agent's default database is not ./superstep.db"
expect_rc 0 env -u SUPERSTEP_DB "$bin" check
contains "$out" "superstep.db: " "check's default database"
expect_rc 0 env SUPERSTEP_DB=env.db "$bin" check --db superstep.db
contains "$out" "superstep.db: " "--db wins over \$SUPERSTEP_DB"
expect_rc 0 env SUPERSTEP_DB= "$bin" check
contains "$out" "superstep.db: " "an empty \$SUPERSTEP_DB counts as none"
cd "$work"

# Many iterations: the run ends by its limit (stop_reason), not by the recursion limit.
for _ in $(seq 1 14); do
  echo '{"content":"again","tool_calls":[{"id":"c","type":"function","function":{"name":"add","arguments":"{\"a\":1,\"b\":1}"}}]}'
done >loop.jsonl
expect_rc 0 "$bin" agent --model fake:loop.jsonl --tools tools.lua --db :memory: --max-iterations 13 --json "loop"
contains "$out" '"stop_reason":"max_iterations"' "an agent with 13 iterations stops at its limit"
expect_rc 2 "$bin" agent "hi"
contains "$err" "--model URL|fake:FILE|openai:MODEL|anthropic:MODEL is required" "agent without a model"
expect_rc 1 "$bin" agent --model fake:missing.jsonl "hi"
contains "$err" "fake model: cannot open 'missing.jsonl'" "agent with a missing script"
expect_rc 1 "$bin" agent --model ftp://x "hi"
contains "$err" "is none of fake:FILE, an http(s) base URL, openai:MODEL or anthropic:MODEL" "agent with a bad model"
printf 'return { { name = "x" } }\n' >badtools.lua
expect_rc 1 "$bin" agent --model fake:replies2.jsonl --tools badtools.lua --db :memory: "hi"
contains "$err" "every tool needs a name and fn" "agent with bad tools"

# kill -9 while a tool runs (the model's reply committed); --continue in a new
# process runs the tool and asks the model once more, not twice.
cat >slowtools.lua <<'LUA'
return {
  { name = "add", parameters = { type = "object" },
    fn = function(args)
      local marker = os.getenv("SST_MARKER")
      if marker then io.open(marker, "w"):close(); repeat os.execute("sleep 0.1") until false end
      return args.a + args.b
    end },
}
LUA
SST_MARKER=$work/marker "$bin" agent --model fake:replies1.jsonl --tools slowtools.lua --db k.db --thread k "What is 2 + 40?" >/dev/null 2>&1 &
victim=$!
for _ in $(seq 1 6000); do [ -e marker ] && break; sleep 0.1; done # the marker decides
[ -e marker ] || fail "the agent's tool never started"
kill -9 "$victim" 2>/dev/null; wait "$victim" 2>/dev/null
expect_rc 0 "$bin" agent --model fake:replies2.jsonl --tools slowtools.lua --db k.db --thread k --continue --json
contains "$out" '"role":"tool","tool_call_id":"c1","name":"add","content":"42"' "the tool ran after the crash"
contains "$out" '"reply":"You are welcome."' "the model was called once after the crash"
expect_rc 2 "$bin" agent --model fake:replies2.jsonl --continue
contains "$err" "--continue and --resume need --thread ID" "continue without a thread"

# Tool approval from the command line: the call waits (exit 3), then is approved.
expect_rc 3 "$bin" agent --model fake:replies1.jsonl --tools tools.lua --db ap.db --thread ap --approve "What is 2 + 40?"
contains "$err" "tool call waiting for approval: add({\"a\":2,\"b\":40})" "approval shows the call"
# (a new process: its scripted model starts at the reply after the tool result)
expect_rc 0 "$bin" agent --model fake:replies2.jsonl --tools tools.lua --db ap.db --thread ap --resume approve --json
contains "$out" '"role":"tool","tool_call_id":"c1","name":"add","content":"42"' "the approved call ran"
expect_rc 1 "$bin" agent --model fake:replies2.jsonl --tools tools.lua --db ap.db --thread ap --resume reject
contains "$err" "has no tool call waiting for approval" "nothing to approve"
expect_rc 1 "$bin" agent --model fake:replies2.jsonl --tools tools.lua --db ap.db --thread ap --resume '{bad'
contains "$err" "--resume: bad JSON: expected '\"' to start an object key" "bad resume JSON"

# superstep agent against a real chat-completions server on 127.0.0.1.
python3 "$root/tests/agent/openai_server.py" >port.txt 2>/dev/null &
server=$!
for _ in $(seq 1 6000); do [ -s port.txt ] && break; sleep 0.1; done
port=$(head -1 port.txt)
expect_rc 0 "$bin" agent --model "http://127.0.0.1:$port/v1" --model-name stream --db :memory: "hello"
contains "$out" "echo: hello" "agent over HTTP streams the reply"
expect_rc 0 "$bin" agent --model "http://127.0.0.1:$port/v1" --model-name 429-once --db :memory: "again"
contains "$out" "echo: again" "agent retries after 429 (Retry-After)"
expect_rc 1 "$bin" agent --model "http://127.0.0.1:$port/v1" --model-name 401 --db :memory: "hello"
contains "$err" "answered HTTP 401" "agent reports the HTTP error"
# Request parameters reach the server (it answers with the ones it got).
expect_rc 0 "$bin" agent --model "http://127.0.0.1:$port/v1" --model-name echo-params --db :memory: \
  --temperature 0.2 --max-tokens 64 --tool-choice auto --json "p"
contains "$out" '{\"max_tokens\": 64, \"temperature\": 0.2, \"tool_choice\": \"auto\"}' "request parameters sent"
expect_rc 1 "$bin" agent --model fake:replies2.jsonl --temperature 1 --db :memory: "p"
contains "$err" "the scripted model takes no parameters" "parameters on the scripted model"

# A conversation with two tools over HTTP, twice on one thread, through a flaky server.
cat >tools2.lua <<'LUA'
return {
  { name = "add", parameters = { type = "object", properties = { a = { type = "integer" },
    b = { type = "integer" } }, required = { "a", "b" } }, fn = function(args) return args.a + args.b end },
  { name = "upper", parameters = { type = "object", properties = { s = { type = "string" } } },
    fn = function(args) return string.upper(args.s) end },
}
LUA
expect_rc 0 "$bin" agent --model "http://127.0.0.1:$port/v1" --model-name agent-flaky --tools tools2.lua --db h.db --thread h "go"
contains "$out" "calling two toolsresults: 42, HI" "two tools over HTTP, results in call order"
expect_rc 0 "$bin" agent --model "http://127.0.0.1:$port/v1" --model-name agent-flaky --tools tools2.lua --db h.db --thread h --json "again"
contains "$out" '"reply":"results: 42, HI"' "second turn over HTTP"
contains "$out" '"content":"go"' "the first turn is kept"
kill "$server" 2>/dev/null; wait "$server" 2>/dev/null

if [ "$failures" -ne 0 ]; then
  echo "$failures CLI check(s) failed"
  exit 1
fi
echo "all CLI checks passed"
