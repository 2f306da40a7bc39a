#!/usr/bin/env bash
# Fails when a lower layer includes a higher one (DESIGN.md "Layers").
# Public headers belong to layers too. The CLI may use only public headers.
# Within src/graph the files form a stack of their own (graph_level, tools/layers.sh;
# docs/graph.md "Source layout"): a file includes the private headers of its
# level and the levels below only. tools/check-layers-symbols.sh checks the same
# order on the built objects' symbols (a call, not only an include).
# Usage: tools/check-layers.sh [REPO_ROOT]
set -euo pipefail
# layer_rank, graph_level, graph_level_name: the layers and src/graph's levels.
# shellcheck source=tools/layers.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/layers.sh"
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
cd "$root"

# The layer of a public header.
header_layer() {
  case "$1" in
    superstep.h) echo umbrella ;; # includes every layer by design
    error.h|version.h|export.h|id.h|sqlite.h|postgres.h|retry.h) echo common ;;
    value.h|json.h) echo values ;;
    reducer.h) echo reducers ;;
    pregel.h) echo pregel ;;
    graph.h|run.h|functional.h) echo graph ;;
    checkpoint.h|cache.h) echo checkpoint ;;
    store.h) echo store ;;
    queue.h) echo queue ;;
    server.h) echo server ;;
    agent.h|llm.h|mcp.h) echo agent ;;
    lua.h) echo lua ;;
    *) echo unknown ;;
  esac
}

bad=0
# A file of src/graph including a header of the same folder: never one of a higher level.
check_graph_include() { # file header
  local f=$1 inc=$2 own target
  own=$(graph_level "$(basename "$f")")
  target=$(graph_level "$inc")
  if [ "$own" = -1 ]; then
    return # the loop below names a file with no level
  elif [ "$target" = -1 ]; then
    echo "check-layers: $f includes $inc, whose level in src/graph's stack is unknown (add it to graph_level in tools/layers.sh)"
    bad=1
  elif [ "$target" -gt "$own" ]; then
    echo "check-layers: $f ($(graph_level_name "$own")) includes $inc ($(graph_level_name "$target")), a higher level of src/graph"
    bad=1
  fi
}
check_file() { # file own_layer
  local f=$1 own=$2 own_rank inc target tr
  own_rank=$(layer_rank "$own")
  while IFS= read -r inc; do
    if [[ $inc == superstep/* ]]; then
      target=$(header_layer "${inc#superstep/}")
    elif [[ $inc == ../* ]]; then
      target=${inc#../}; target=${target%%/*}
    elif [[ $inc == */* ]]; then
      target=${inc%%/*}
    elif [[ $inc == common.h ]]; then
      target=common
    elif [ "$own" = graph ] && [ -f "$(dirname "$f")/$inc" ]; then
      check_graph_include "$f" "$inc"; continue
    else
      continue # a header of the same folder or a system header
    fi
    if [ "$own" = cli ] && [[ $inc != superstep/* ]]; then
      echo "check-layers: $f includes private header $inc (the CLI uses the public API only)"
      bad=1; continue
    fi
    if [ "$target" = unknown ]; then
      echo "check-layers: $f includes $inc, whose layer is unknown (add it to tools/check-layers.sh)"
      bad=1; continue
    fi
    if [ "$(layer_rank "$target")" = -1 ]; then
      continue
    fi
    tr=$(layer_rank "$target")
    if [ "$tr" -gt "$own_rank" ]; then
      echo "check-layers: $f ($own) includes $inc ($target), a higher layer"
      bad=1
    fi
  done < <(sed -nE 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"([^"]+)".*/\1/p' "$f")
}

for dir in src/*/; do
  layer=$(basename "$dir")
  [ "$(layer_rank "$layer")" = -1 ] && { echo "check-layers: unknown layer folder $dir"; bad=1; continue; }
  for f in "$dir"*.[ch]; do
    [ -f "$f" ] || continue
    check_file "$f" "$layer"
    if [ "$layer" = graph ] && [ "$(graph_level "$(basename "$f")")" = -1 ]; then
      echo "check-layers: $f has no level in src/graph's stack (add it to graph_level in tools/layers.sh)"
      bad=1
    fi
  done
done
for f in include/superstep/*.h; do
  [ -f "$f" ] || continue
  layer=$(header_layer "$(basename "$f")")
  [ "$layer" = umbrella ] || check_file "$f" "$layer"
done
[ -d cli ] && for f in cli/*.[ch]; do [ -f "$f" ] && check_file "$f" cli; done
[ -f src/common.h ] && check_file src/common.h common
exit $bad
