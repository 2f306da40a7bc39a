#!/usr/bin/env bash
# Fails if a C file differs from .clang-format (STYLE rule 33).
# Usage: tools/check-format.sh [REPO_ROOT]   (tools/format.sh fixes files)
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
command -v clang-format >/dev/null || { echo "check-format: clang-format is not installed" >&2; exit 1; }
# tests/data holds fixtures and bench/peers the peer's npm packages: not our code.
mapfile -t files < <(find include src tests cli bench examples python/src -name '*.[ch]' -not -path 'tests/data/*' -not -path 'bench/peers/*' -not -path '*/node_modules/*' 2>/dev/null)
# One clang-format process for all files (one per file took minutes on a loaded machine);
# it names each file that differs in its "code should be clang-formatted" errors.
existing=()
for f in "${files[@]}"; do [ -f "$f" ] && existing+=("$f"); done
[ ${#existing[@]} -gt 0 ] || exit 0
if out=$(clang-format --dry-run --Werror "${existing[@]}" 2>&1); then
  exit 0
fi
names=$(printf '%s\n' "$out" | sed -n 's/^\([^:]*\.[ch]\):[0-9]*:[0-9]*: error:.*/\1/p' | sort -u)
if [ -z "$names" ]; then
  printf '%s\n' "$out" >&2 # clang-format failed for another reason
  exit 1
fi
while IFS= read -r f; do echo "check-format: $f is not formatted (run tools/format.sh)"; done <<<"$names"
exit 1
