#!/usr/bin/env bash
# Fails on banned functions (STYLE rule 36). VLAs are rejected by -Wvla.
# Usage: tools/check-banned.sh [REPO_ROOT]
set -euo pipefail
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"
banned='strcpy|strcat|sprintf|vsprintf|gets|strtok|atoi|atol|atof|rand|strerror|localtime|gmtime|ctime|asctime'
# Word boundary before the name, so sst_strerror and snprintf are fine.
# tests/data holds fixtures (one of them breaks this rule on purpose); bench/peers the
# peer's npm packages.
hits=$(grep -rnE "(^|[^A-Za-z0-9_])($banned)[[:space:]]*\(" --include='*.c' --include='*.h' \
         --exclude-dir=data --exclude-dir=peers --exclude-dir=node_modules include src cli tests bench examples 2>/dev/null \
       | grep -vE '^[^:]+:[0-9]+:[[:space:]]*(\*|//|/\*)' || true)
if [ -n "$hits" ]; then
  echo "check-banned: banned functions used:"
  echo "$hits"
  exit 1
fi
