# shellcheck shell=bash disable=SC2034 # the variables are the sourcing test's
# The start of a CLI test of one example (sourced right after `set -uo pipefail`, with
# the test's own arguments and the example's path under examples/):
#   source "$(dirname "${BASH_SOURCE[0]}")/example.sh" "$1" "$2" lua/supervisor.lua
# sets $runner (the first argument made absolute: the superstep binary or the Python
# runner), $repo (the second: the repository), $script (the example; the test fails
# at once when it is missing), $work (a scratch directory, made the current one and
# removed at exit) and failures=0, and sources harness.sh ($here: its folder).
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
runner=$(realpath "$1")
repo=$(realpath "$2")
script=$repo/examples/$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work" || exit 1
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

[ -f "$script" ] || { echo "FAIL: no $script"; exit 1; }
