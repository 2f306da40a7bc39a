#!/usr/bin/env bash
# Fails when a built object of a lower layer uses a symbol that an object of a higher
# layer defines: an upward call (or a reference to a higher layer's data), which
# tools/check-layers.sh cannot see when it is made without including the higher
# header (a declaration of one's own, a macro). Within src/graph, likewise for the
# levels of its stack. The layers and levels are tools/layers.sh's.
#
# Each argument is an object file (NAME.c.o, from src/LAYER/NAME.c) or a file listing
# them, one a line (CMake writes one for the test check_layers_symbols from the
# OBJECT libraries). An object's layer and file come from its path: the last
# src/LAYER/NAME.c.o in it. Needs nm (binutils).
# Usage: tools/check-layers-symbols.sh OBJECT_OR_LIST...
set -euo pipefail
# shellcheck source=tools/layers.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/layers.sh"
command -v nm >/dev/null || { echo "check-layers-symbols: nm is not installed (binutils)" >&2; exit 1; }
[ $# -gt 0 ] || { echo "usage: $0 OBJECT_OR_LIST..." >&2; exit 2; }

objects=()
for arg in "$@"; do
  if [[ $arg == *.o || $arg == *.obj ]]; then
    objects+=("$arg")
  elif [ -f "$arg" ]; then
    while IFS= read -r line; do [ -n "$line" ] && objects+=("$line"); done <"$arg"
  else
    echo "check-layers-symbols: no list of objects '$arg'" >&2; exit 1
  fi
done
[ ${#objects[@]} -gt 0 ] || { echo "check-layers-symbols: no objects to check" >&2; exit 1; }

bad=0
# One line an object for awk: path, its source (src/LAYER/NAME.c), layer rank, level.
table=$(mktemp)
trap 'rm -f "$table"' EXIT
for o in "${objects[@]}"; do
  if [ ! -f "$o" ]; then
    echo "check-layers-symbols: $o is missing (build the libraries first)"; bad=1; continue
  fi
  if [[ ! $o =~ (^|/)src/([A-Za-z0-9_]+)/([^/]+\.c)\.o(bj)?$ ]]; then
    echo "check-layers-symbols: $o is not the object of a file src/LAYER/NAME.c"; bad=1; continue
  fi
  layer=${BASH_REMATCH[2]} file=${BASH_REMATCH[3]}
  rank=$(layer_rank "$layer") level=-1
  if [ "$rank" = -1 ]; then
    echo "check-layers-symbols: $o: unknown layer '$layer' (add it to tools/layers.sh)"; bad=1; continue
  fi
  if [ "$layer" = graph ]; then
    level=$(graph_level "$file")
    if [ "$level" = -1 ]; then
      echo "check-layers-symbols: src/graph/$file has no level in src/graph's stack (add it to graph_level in tools/layers.sh)"
      bad=1; continue
    fi
  fi
  printf '%s\t%s\t%s\t%s\t%s\n' "$o" "src/$layer/$file" "$layer" "$rank" "$level" >>"$table"
done
[ -s "$table" ] || exit 1

names=""
for l in 0 1 2 3 4 5 6 7 8; do names+="$l=$(graph_level_name "$l") "; done

# nm -P -A -g: "OBJECT: SYMBOL TYPE [VALUE SIZE]" for the external symbols; type U is
# undefined (used), w/v weak undefined, any other letter defined.
cut -f1 "$table" | tr '\n' '\0' | xargs -0 nm -P -A -g | awk -v names="$names" '
  BEGIN { FS = "\t"; n = split(names, kv, " "); for (i = 1; i <= n; i++) { split(kv[i], p, "="); lname[p[1]] = p[2] } }
  FNR == NR { src[$1] = $2; layer[$1] = $3; rank[$1] = $4; level[$1] = $5; next }
  {
    sub(/: /, "\t"); split($0, f, "\t"); obj = f[1]
    m = split(f[2], w, " "); sym = w[1]; type = w[2]
    if (!(obj in src)) next
    if (type == "U" || type == "w" || type == "v") { nuse++; use_obj[nuse] = obj; use_sym[nuse] = sym }
    else if (!(sym in def)) def[sym] = obj
  }
  END {
    bad = 0
    for (i = 1; i <= nuse; i++) {
      o = use_obj[i]; s = use_sym[i]
      if (!(s in def)) continue # a system library'"'"'s, or a layer not given
      d = def[s]
      if (rank[d] + 0 > rank[o] + 0) {
        printf "check-layers-symbols: %s (%s) uses %s, defined in %s (%s), a higher layer\n", src[o], layer[o], s, src[d], layer[d]
        bad = 1
      } else if (layer[o] == "graph" && layer[d] == "graph" && level[d] + 0 > level[o] + 0) {
        printf "check-layers-symbols: %s (%s) uses %s, defined in %s (%s), a higher level of src/graph\n", src[o], lname[level[o]], s, src[d], lname[level[d]]
        bad = 1
      }
    }
    exit bad
  }' "$table" - || bad=1
exit $bad
