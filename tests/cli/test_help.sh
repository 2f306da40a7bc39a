#!/usr/bin/env bash
# Every command's usage: `superstep COMMAND --help` (and -h) prints it on
# stdout and exits 0, naming the command and every option it parses, each of
# which the command accepts; `superstep help COMMAND` prints the same text;
# `superstep --help` and `superstep help` the list of commands; an unknown
# command, and an option given to a command that does not take it, are
# usage errors (exit 2) that print the command's synopsis.
# Usage: test_help.sh SUPERSTEP_BINARY
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset SUPERSTEP_DB SST_WEB_DIR
failures=0
# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

# The options each command parses (read from its parser in cli/).
declare -A OPTIONS=(
  [run]="--input --thread --db --checkpoint --resume --stream --subgraphs --workers
         --memory-limit --otlp-endpoint --trace-content --json"
  [state]="--thread --checkpoint --db --memory-limit --json"
  [history]="--thread --db --limit --before --values --memory-limit --json"
  [threads]="--db --memory-limit --json"
  [graph]="--mermaid --dot --svg --xray --memory-limit"
  [check]="--db --repair"
  [agent]="--model --model-name --api-key-env --temperature --max-tokens --tool-choice
           --cache-prompt --fallback-model --tools --mcp --mcp-url --memory-limit --system
           --max-iterations --response-format --structured-strategy --interrupt-on
           --limit-model-calls --limit-tool-calls --summarize-at --summarize-keep --approve
           --resume --continue --thread --db --otlp-endpoint --trace-content --json"
  [serve]="--graph --host --port --db --shared-db --workers --auth-token-env
           --insecure-listen-any --max-body --max-connections --timeout --stream-backlog
           --runs-per-thread --http-threads --lease --web-dir --no-web --otlp-endpoint
           --trace-content --open --quiet"
  [worker]="--graph --db --workers --lease --otlp-endpoint --trace-content --quiet"
  [store]="--db --json --embed --model --dims --api-key-env --field --ttl --no-index --query
           --filter --limit --offset --prefix --suffix --max-depth"
  [store put]="--ttl --no-index --db --json --embed --model --dims --api-key-env --field"
  [store get]="--db --json --embed --model --dims --api-key-env --field"
  [store delete]="--db --json --embed --model --dims --api-key-env --field"
  [store search]="--query --filter --limit --offset --db --json --embed --model --dims
                  --api-key-env --field"
  [store ls]="--prefix --suffix --max-depth --limit --offset --db --json --embed --model --dims
              --api-key-env --field"
  [help]=""
)
commands=(run state history threads graph check agent serve worker store help)

for cmd in "${!OPTIONS[@]}"; do
  read -ra words <<<"$cmd"
  expect_rc 0 "$bin" "${words[@]}" --help
  usage=$out
  [ -z "$err" ] || fail "$cmd --help: stderr should be empty, got: $err"
  [[ "$usage" == "usage: superstep $cmd"* ]] || fail "$cmd --help: should start 'usage: superstep $cmd', got: ${usage:0:80}"
  for opt in ${OPTIONS[$cmd]}; do
    # As a word of its own: --db does not count for --dbx, nor --limit for --limit-tool-calls.
    grep -qE -- "(^|[^a-z-])$opt([^a-z-]|\$)" <<<"$usage" || fail "$cmd --help does not name $opt"
  done
  expect_rc 0 "$bin" "${words[@]}" -h
  [ "$out" = "$usage" ] || fail "$cmd -h differs from $cmd --help"
  expect_rc 0 "$bin" help "${words[@]}"
  [ "$out" = "$usage" ] || fail "help $cmd differs from $cmd --help"
  # --help anywhere after the command.
  expect_rc 0 "$bin" "${words[@]}" x.lua --json --help
  [ "$out" = "$usage" ] || fail "$cmd x.lua --json --help differs from $cmd --help"
done

# Each option named is one the command parses: given alone (a value missing,
# or no script), the command may refuse to run, but never for the option.
for cmd in "${!OPTIONS[@]}"; do
  [ "$cmd" = store ] && continue # 'store --db' has no command: each store command is checked
  read -ra words <<<"$cmd"
  for opt in ${OPTIONS[$cmd]}; do
    "$bin" "${words[@]}" "$opt" >out 2>err </dev/null
    if grep -qE "unknown option|not an option" err; then
      fail "$cmd $opt: refused as an option: $(head -1 err)"
    fi
  done
done

# The overview: --help, help (no command) and -h, naming every command; no
# arguments at all is a usage error that prints it on stderr.
expect_rc 0 "$bin" --help
overview=$out
for cmd in "${commands[@]}"; do
  grep -qE "^  $cmd " <<<"$overview" || fail "--help does not list the command $cmd"
done
contains "$overview" "exit codes" "--help: the exit codes"
expect_rc 0 "$bin" help
[ "$out" = "$overview" ] || fail "'help' differs from --help"
expect_rc 0 "$bin" -h
[ "$out" = "$overview" ] || fail "-h differs from --help"
expect_rc 2 "$bin"
[ "$err" = "$overview" ] || fail "no arguments: the overview on stderr"

# Usage errors: exit 2, the problem, then the command's synopsis.
expect_rc 2 "$bin" help nosuch
contains "$err" "superstep help: unknown command 'nosuch'" "help nosuch"
[ -z "$out" ] || fail "help nosuch: nothing on stdout, got: $out"
expect_rc 2 "$bin" help store nosuch
contains "$err" "unknown command 'nosuch'" "help store nosuch"
expect_rc 2 "$bin" help run extra
contains "$err" "unexpected argument 'extra'" "help run extra"
expect_rc 2 "$bin" nosuch --help
contains "$err" "unknown command 'nosuch'" "nosuch --help"
expect_rc 2 "$bin" agent --frobnicate
contains "$err" "superstep agent: unknown option '--frobnicate'" "agent: unknown option"
contains "$err" "usage: superstep agent --model SPEC" "agent: the synopsis after the error"
expect_rc 2 "$bin" check --frobnicate
contains "$err" "unexpected argument '--frobnicate'" "check: unknown option"
contains "$err" "usage: superstep check [--db PATH] [--repair]" "check: the synopsis"
expect_rc 2 "$bin" check --db
contains "$err" "option '--db' needs a value" "check --db without a value"
expect_rc 2 "$bin" store put --query x
contains "$err" "--query: not an option of 'put'" "store put --query"
contains "$err" "usage: superstep store put NS KEY" "store put: its synopsis"
lacks "$err" "superstep store ls" "store put: only its synopsis"
# An option of another command is refused, not ignored.
expect_rc 2 "$bin" state x.lua --thread t --workers 2
contains "$err" "--workers: not an option of 'state' (only of: run)" "state --workers"
expect_rc 2 "$bin" graph x.lua --db x.db
contains "$err" "--db: not an option of 'graph'" "graph --db"
expect_rc 2 "$bin" run x.lua --xray=2
contains "$err" "--xray: not an option of 'run' (only of: graph)" "run --xray=2"
expect_rc 2 "$bin" worker --port 8000 --db postgresql://
contains "$err" "superstep worker: unknown option '--port'" "worker --port"
contains "$err" "usage: superstep worker" "worker: its synopsis"

[ $failures = 0 ] && echo "help: ok"
exit $failures
