#!/usr/bin/env bash
# Formats every tracked C file in place with .clang-format.
set -euo pipefail
cd "$(dirname "$0")/.."
find include src tests cli bench examples python/src -name '*.[ch]' -not -path 'tests/data/*' -not -path 'bench/peers/*' -not -path '*/node_modules/*' 2>/dev/null | xargs clang-format -i
