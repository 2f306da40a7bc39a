#!/usr/bin/env bash
# Fails if a C file differs from .clang-format (STYLE rule 33).
# Usage: tools/check-format.sh [REPO_ROOT]   (tools/format.sh fixes files)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 1; }
# tests/data holds fixtures and bench/peers the peer's npm packages: not our code.
mapfile -t files < <(find include src tests cli bench examples -name '*.[ch]' -not -path 'tests/data/*' -not -path 'bench/peers/*' 2>/dev/null)
bad=0
for f in "${files[@]}"; do
  [ -f "$f" ] || continue
  if ! clang-format --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "check-format: $f is not formatted (run tools/format.sh)"
    bad=1
  fi
done
exit $bad
