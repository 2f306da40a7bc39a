#!/usr/bin/env bash
# The agent layer's parts through the superstep tool and the examples, as
# docs/agent.md shows them: structured output, middleware (human in the
# loop, call limits), an MCP server's tools (the reference server over
# stdio), and traces sent to a receiver that decodes them with
# OpenTelemetry's own definitions (tests/otlp/receiver.mjs), checked as a
# span tree; a dead collector never fails or slows a run.
# Usage: test_agent_ecosystem.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
repo=$(realpath "$2")
work=$(mktemp -d)
receiver_pid=
cleanup() {
  [ -n "$receiver_pid" ] && kill "$receiver_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work" || exit 1
failures=0
# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"
server="$repo/tests/mcp/node_modules/@modelcontextprotocol/server-everything/dist/index.js"
[ -f "$server" ] || { echo "FAIL: $server is missing: npm ci --prefix tests/mcp"; exit 1; }
[ -f "$repo/tests/otlp/node_modules/@opentelemetry/otlp-transformer/package.json" ] ||
  { echo "FAIL: npm ci --prefix tests/otlp"; exit 1; }

# ---- the examples, as docs/agent.md runs them ----
expect_rc 0 "$bin" run "$repo/examples/agent/structured.lua" --db :memory: --json \
  --input '{"text": "Write to Ada Lovelace (36) at ada@example.org."}'
contains "$out" '"contact":{"age":36,"email":"ada@example.org","name":"Ada Lovelace"}' \
  "structured example: the contact"
contains "$out" '"retries":1' "structured example: one wrong answer sent back"
contains "$err" 'sent back: error: the answer does not match the schema: /age: expected integer' \
  "structured example: the error the model read"

expect_rc 0 "$bin" run "$repo/examples/agent/middleware.lua" --db :memory: --json --input \
  '{"decision": {"type": "edit", "edited_action": {"name": "send_email", "args": {"to": "me@example.org", "body": "Lisbon: 21C"}}}}'
contains "$out" '"tool_results":["lookup: Lisbon: 21C","send_email: sent to me@example.org"]' \
  "middleware example: the edited email"
contains "$err" 'asked: send_email {"body":"Lisbon: 21C","to":"team@example.org"} (An email leaves the building)' \
  "middleware example: what the person was asked"
contains "$err" 'model call with 4 messages' "middleware example: the Lua hook"
contains "$err" 'tool send_email took' "middleware example: the Lua wrap"

expect_rc 0 "$bin" run "$repo/examples/agent/mcp.lua" --db :memory: --json --input '{"question": "2 + 40?"}'
contains "$out" '"tool_results":["get-sum: The sum of 2 and 40 is 42.","echo: Echo: hello over MCP","shout: DONE"]' \
  "MCP example: the server's tools and a Lua tool"

# ---- superstep agent ----
call() { printf '{"id":"%s","type":"function","function":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"; }
cat >structured.jsonl <<JSONL
{"content":null,"tool_calls":[$(call c1 Contact '"{\"name\":\"Bo\"}"')],"usage_metadata":{"input_tokens":100,"output_tokens":10,"total_tokens":110,"input_token_details":{"cache_read":60}}}
{"content":null,"tool_calls":[$(call c2 Contact '"{\"name\":\"Bo\",\"age\":7}"')],"usage_metadata":{"input_tokens":120,"output_tokens":12,"total_tokens":132,"input_token_details":{"cache_read":100}}}
JSONL
cat >contact.json <<'JSON'
{"title": "Contact", "type": "object", "required": ["name", "age"],
 "properties": {"name": {"type": "string"}, "age": {"type": "integer"}}}
JSON
expect_rc 0 "$bin" agent --model fake:structured.jsonl --db :memory: --response-format contact.json --json "Bo, 7"
contains "$out" '"structured_response":{"name":"Bo","age":7}' "agent --response-format: the answer"
contains "$out" '"usage":{"input_tokens":220,"output_tokens":22,"total_tokens":242,"input_token_details":{"cache_read":160}}' \
  "agent: the run's usage summed"
expect_rc 0 "$bin" agent --model fake:structured.jsonl --db :memory: --response-format contact.json "Bo, 7"
contains "$err" 'tokens: 220 in (160 read from cache, 0 written to it), 22 out' "agent: usage printed"
contains "$out" '"age": 7' "agent: the answer printed"
expect_rc 1 "$bin" agent --model fake:structured.jsonl --db :memory: --response-format '{"type": 5}' "x"
contains "$err" "response_format" "a bad schema is named"
expect_rc 2 "$bin" agent --model fake:structured.jsonl --structured-strategy magic "x"

# Each process reads its scripted replies from the first: the resuming one gets the last.
cat >hitl.jsonl <<JSONL
{"content":null,"tool_calls":[$(call c1 shout '"{\"text\":\"hi\"}"'),$(call c2 add '"{\"a\":1,\"b\":2}"')]}
JSONL
echo '{"content":"done"}' >hitl-after.jsonl
expect_rc 3 "$bin" agent --model fake:hitl.jsonl --tools "$repo/examples/agent/tools.lua" --db hitl.db \
  --thread h1 --interrupt-on shout "go"
contains "$err" 'tool call waiting for a decision: shout({"text":"hi"})' "agent --interrupt-on: the pending call"
lacks "$err" 'add(' "agent --interrupt-on: add is not asked about"
expect_rc 0 "$bin" agent --model fake:hitl-after.jsonl --tools "$repo/examples/agent/tools.lua" --db hitl.db \
  --thread h1 --interrupt-on shout --resume '{"decisions": [{"type": "respond", "message": "no shouting today"}]}' --json
contains "$out" '"content":"no shouting today"' "agent --resume respond: the person's answer"
contains "$out" '"content":"3"' "agent --resume: add ran"

cat >loop.jsonl <<JSONL
{"content":null,"tool_calls":[$(call c1 add '"{\"a\":1,\"b\":1}"')]}
{"content":null,"tool_calls":[$(call c2 add '"{\"a\":2,\"b\":2}"')]}
JSONL
expect_rc 0 "$bin" agent --model fake:loop.jsonl --tools "$repo/examples/agent/tools.lua" --db :memory: \
  --limit-model-calls 1 --json "loop"
contains "$out" '"reply":"Model call limits exceeded: run limit (1/1)"' "agent --limit-model-calls"

cat >mcp.jsonl <<JSONL
{"content":null,"tool_calls":[$(call c1 echo '"{\"message\":\"over stdio\"}"')]}
{"content":"echoed"}
JSONL
expect_rc 0 "$bin" agent --model fake:mcp.jsonl --db :memory: --mcp "node '$server' stdio" --json "echo"
contains "$out" '"content":"Echo: over stdio"' "agent --mcp: the server's echo"
expect_rc 1 "$bin" agent --model fake:mcp.jsonl --db :memory: --mcp "/nonexistent/mcp-server" "echo"
contains "$err" "No such file or directory" "agent --mcp: a missing server is named"

# ---- traces ----
mkfifo hold
node "$repo/tests/otlp/receiver.mjs" <hold >port 2>receiver.err &
receiver_pid=$!
exec 9>hold # the receiver lives while this stays open
for _ in $(seq 100); do [ -s port ] && break; sleep 0.1; done
port=$(head -1 port)
[ -n "$port" ] || fail "the receiver did not start: $(cat receiver.err)"
expect_rc 0 "$bin" agent --model fake:mcp.jsonl --db :memory: --mcp "node '$server' stdio" \
  --otlp-endpoint "http://127.0.0.1:$port/v1/traces" --trace-content "echo"
state=$(curl -s "http://127.0.0.1:$port/state")
check=$(python3 - "$state" <<'PY'
import json, sys
st = json.loads(sys.argv[1])
problems = list(st.get("errors", []))
spans = st["spans"]
by_id = {s["spanId"]: s for s in spans}
def one(pred, what):
    found = [s for s in spans if pred(s)]
    if len(found) < 1:
        problems.append("no " + what)
        return None
    return found[0]
def attr(s, k):
    v = s["attributes"].get(k, {})
    return next(iter(v.values()), None) if v else None
def parent(s):
    return by_id.get(s["parentSpanId"])
run = one(lambda s: s["name"] == "run" and not s["parentSpanId"], "root run span")
llm = one(lambda s: s["name"] == "chat fake", "model call span")
tool = one(lambda s: s["name"] == "execute_tool echo", "tool span")
if run and llm and tool:
    task = parent(llm)
    if not task or task["name"] != "llm_call": problems.append("the model span is not under llm_call")
    elif not parent(task) or parent(task)["name"] != "superstep": problems.append("llm_call not under a superstep")
    elif parent(parent(task)) is not run: problems.append("the superstep is not under the run")
    if not parent(tool) or parent(tool)["name"] != "tool": problems.append("the tool span is not under tool")
    if attr(llm, "gen_ai.provider.name") != "superstep.fake": problems.append("provider: %r" % attr(llm, "gen_ai.provider.name"))
    if llm["kind"] != 3: problems.append("the model span is not a client span")
    if "over stdio" not in (attr(llm, "gen_ai.input.messages") or "") and "echo" not in (attr(llm, "gen_ai.input.messages") or ""):
        problems.append("--trace-content: no messages on the model span")
    if attr(tool, "gen_ai.tool.name") != "echo": problems.append("gen_ai.tool.name")
    if attr(run, "superstep.status") != "completed": problems.append("run status %r" % attr(run, "superstep.status"))
    if len({s["traceId"] for s in spans}) != 1: problems.append("more than one trace")
    if run["resource"].get("service.name", {}).get("stringValue") != "superstep": problems.append("service.name")
print("ok" if not problems else "; ".join(map(str, problems)))
PY
)
[ "$check" = ok ] || fail "the span tree: $check"

# run: a graph script's run, superstep and task spans.
curl -s -X POST "http://127.0.0.1:$port/reset" >/dev/null
OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:$port" OTEL_SERVICE_NAME=w1 \
  expect_rc 0 "$bin" run "$repo/examples/lua/w1_loop.lua" --db :memory: --input '{"counter": 0, "n": 3}'
state=$(curl -s "http://127.0.0.1:$port/state")
contains "$state" '"name":"run"' "run: the run span (OTEL_EXPORTER_OTLP_ENDPOINT)"
contains "$state" '"service.name":{"stringValue":"w1"}' "run: OTEL_SERVICE_NAME"
contains "$state" '"errors":[]' "run: every export decoded by OpenTelemetry's definitions"

# serve: every run the workers execute is traced.
curl -s -X POST "http://127.0.0.1:$port/reset" >/dev/null
"$bin" serve --graph w1="$repo/examples/lua/w1_loop.lua" --db serve.db --port 0 --quiet \
  --otlp-endpoint "http://127.0.0.1:$port/v1/traces" >serve.out 2>serve.err &
serve_pid=$!
for _ in $(seq 100); do grep -q listening serve.out && break; sleep 0.1; done
api=$(sed -n 's/^listening on //p' serve.out)
if [ -n "$api" ]; then
  curl -s "$api/runs/wait" -H 'content-type: application/json' \
    -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
    -d '{"assistant_id":"w1","input":{"counter":0,"n":2}}' >run.json
  contains "$(cat run.json)" '"counter":2' "serve: the run"
  # A run on a thread: its run object's kwargs stay LangGraph's (no traceparent).
  tid=$(curl -s "$api/threads" -H 'content-type: application/json' -d '{}' | python3 -c 'import json,sys; print(json.load(sys.stdin)["thread_id"])')
  curl -s "$api/threads/$tid/runs/wait" -H 'content-type: application/json' \
    -H 'traceparent: 00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' \
    -d '{"assistant_id":"w1","input":{"counter":0,"n":1}}' >/dev/null
  runs=$(curl -s "$api/threads/$tid/runs")
  contains "$runs" '"kwargs":{' "serve: the thread's run"
  lacks "$runs" "traceparent" "serve: the trace context stays out of the run's kwargs"
else
  fail "serve did not start: $(cat serve.err)"
fi
kill "$serve_pid"
wait "$serve_pid"
state=$(curl -s "http://127.0.0.1:$port/state")
contains "$state" '"name":"inc"' "serve --otlp-endpoint: the run's task spans"
joined=$(python3 - "$state" <<'PY'
import json, sys
spans = json.loads(sys.argv[1])["spans"]
runs = [s for s in spans if s["name"] == "run"]
ok = runs and all(s["traceId"] == "4bf92f3577b34da6a3ce929d0e0e4736" for s in spans) and \
     runs[0]["parentSpanId"] == "00f067aa0ba902b7"
print("ok" if ok else "no: " + json.dumps([(s["name"], s["traceId"], s["parentSpanId"]) for s in spans][:4]))
PY
)
[ "$joined" = ok ] || fail "serve: the run joins the request's traceparent: $joined"
contains "$state" '"superstep.status":{"stringValue":"completed"}' "serve: the run span's outcome"

# A dead collector: the run completes and says what was dropped, and the tracer's 2 s
# shutdown bound keeps it from hanging. The limit is 10 times that, scaled as the C tests'
# (tu_time_scale: SST_TEST_TIME_SCALE, times 10 for a sanitizer build).
sanitized=1
if { ldd "$bin"; nm -D "$bin"; } 2>/dev/null | grep -qE 'lib(asan|tsan)|__(asan|tsan)_init'; then
  sanitized=10
fi
limit=$(awk -v s="${SST_TEST_TIME_SCALE:-1}" -v z="$sanitized" \
  'BEGIN { if (s + 0 <= 0) s = 1; printf "%d", 10 * 2 * s * z + 0.999 }')
t0=$(date +%s)
expect_rc 0 "$bin" agent --model fake:structured.jsonl --db :memory: --response-format contact.json \
  --otlp-endpoint "http://127.0.0.1:9/v1/traces" "Bo, 7"
t1=$(date +%s)
[ $((t1 - t0)) -lt "$limit" ] || fail "a dead collector held the run up: $((t1 - t0)) s (limit $limit s)"
contains "$err" "spans dropped" "a dead collector is reported"
expect_rc 1 "$bin" agent --model fake:structured.jsonl --db :memory: --otlp-endpoint "ftp://x" "Bo"
contains "$err" "tracing:" "a bad endpoint is named"

exec 9>&-
exit "$failures"
