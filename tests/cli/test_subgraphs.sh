#!/usr/bin/env bash
# Subgraphs from the command line: superstep graph --xray[=N] draws a
# subgraph node's child graph expanded (LangGraph's get_graph(xray=...)),
# and superstep run --stream MODE --subgraphs prints the subgraphs' events
# too, each line led by its namespace as LangGraph's stream(subgraphs=True)
# yields (namespace, chunk): [ns, chunk], or [ns, mode, chunk] with several
# modes, ns the list of "node:task_id" parts ([] for the root graph).
# Usage: test_subgraphs.sh SUPERSTEP_BINARY REPO_ROOT
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bin=$(realpath "$1")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
failures=0

# shellcheck source=tests/cli/harness.sh
source "$here/harness.sh"

# first -> child (c1 -> c2) -> last.
cat >g.lua <<'EOF'
local sst = superstep
local child = sst.StateGraph{ log = sst.reducers.append }
child:add_node("c1", function() return { log = { "c1" } } end)
child:add_node("c2", function() return { log = { "c2" } } end)
child:add_edge(sst.START, "c1")
child:add_edge("c1", "c2")
child:add_edge("c2", sst.END)
local g = sst.StateGraph{ log = sst.reducers.append }
g:add_node("first", function() return { log = { "first" } } end)
g:add_node("child", child:compile())
g:add_node("last", function() return { log = { "last" } } end)
g:add_edge(sst.START, "first")
g:add_edge("first", "child")
g:add_edge("child", "last")
g:add_edge("last", sst.END)
return g
EOF

# ---- graph --xray ----
expect_rc 0 "$bin" graph g.lua
plain=$out
contains "$plain" '    first --> child' "plain: the subgraph is one node"
lacks "$plain" 'c1' "plain: no child nodes"
expect_rc 0 "$bin" graph g.lua --xray
contains "$out" '    subgraph child["child"]
        child_3ac1("c1")
        child_3ac2("c2")
    end' "xray: the child's nodes in a subgraph block"
contains "$out" '    first --> child_3ac1' "xray: the edge into the child goes to its first node"
contains "$out" '    child_3ac2 --> last' "xray: the edge out leaves from its last node"
contains "$out" '    child_3ac1 --> child_3ac2' "xray: the child's own edge"
lacks "$out" '    child("child")' "xray: no collapsed node"
expect_rc 0 "$bin" graph g.lua --mermaid --xray=0
[ "$out" = "$plain" ] || fail "--xray=0 is the plain drawing: $out"
expect_rc 0 "$bin" graph g.lua --dot --xray
contains "$out" '  subgraph "cluster_child" {
    label="child";
    "child:c1" [shape=box, label="c1"];' "dot xray: a cluster"
contains "$out" '  "first" -> "child:c1";' "dot xray: the edge in"
contains "$out" '  "child:c2" -> "last";' "dot xray: the edge out"

# ---- run --stream --subgraphs ----
hex='[0-9a-f]{32}'
expect_rc 0 "$bin" run g.lua --db :memory: --input '{}' --stream updates --subgraphs
[ "$(grep -c . <<<"$out")" = 5 ] || fail "five update lines: $out"
[ "$(line "$out" 1)" = '[[],{"first":{"log":["first"]}}]' ] || fail "root line first: $out"
matches "$(line "$out" 2)" "\[\[\"child:$hex\"\],\{\"c1\":\{\"log\":\[\"c1\"\]\}\}\]" "child's c1"
matches "$(line "$out" 3)" "\[\[\"child:$hex\"\],\{\"c2\":\{\"log\":\[\"c2\"\]\}\}\]" "child's c2"
[ "$(line "$out" 2 | cut -c1-42)" = "$(line "$out" 3 | cut -c1-42)" ] ||
  fail "one namespace for the child's run: $out"
contains "$(line "$out" 4)" '[[],{"child":{"log":' "the parent's child update after the child's"
[ "$(line "$out" 5)" = '[[],{"last":{"log":["last"]}}]' ] || fail "root line last: $out"

# Without --subgraphs: the root's chunks only, as before.
expect_rc 0 "$bin" run g.lua --db :memory: --input '{}' --stream updates
[ "$(grep -c . <<<"$out")" = 3 ] || fail "three root update lines: $out"
[ "$(line "$out" 1)" = '{"first":{"log":["first"]}}' ] || fail "root chunk unchanged: $out"
contains "$(line "$out" 2)" '{"child":{"log":' "the child node's update"
lacks "$out" '"c1":' "no child update"

# Several modes: [ns, mode, chunk].
expect_rc 0 "$bin" run g.lua --db :memory: --input '{}' --stream updates,values --subgraphs
[ "$(line "$out" 1)" = '[[],"updates",{"first":{"log":["first"]}}]' ] || fail "triple 1: $out"
[ "$(line "$out" 2)" = '[[],"values",{"log":["first"]}]' ] || fail "triple 2: $out"
matches "$(line "$out" 4)" "\[\[\"child:$hex\"\],\"updates\",\{\"c1\":\{\"log\":\[\"c1\"\]\}\}\]" \
  "child's triple"

# Three levels: the grandchild's namespace has two parts; --xray=1 leaves it collapsed.
cat >n.lua <<'EOF'
local sst = superstep
local grand = sst.StateGraph{ log = sst.reducers.append }
grand:add_node("g1", function() return { log = { "g1" } } end)
grand:add_edge(sst.START, "g1")
grand:add_edge("g1", sst.END)
local child = sst.StateGraph{ log = sst.reducers.append }
child:add_node("c1", function() return { log = { "c1" } } end)
child:add_node("inner", grand:compile())
child:add_edge(sst.START, "c1")
child:add_edge("c1", "inner")
child:add_edge("inner", sst.END)
local g = sst.StateGraph{ log = sst.reducers.append }
g:add_node("child", child:compile())
g:add_edge(sst.START, "child")
g:add_edge("child", sst.END)
return g
EOF
expect_rc 0 "$bin" run n.lua --db :memory: --input '{}' --stream updates --subgraphs
[ "$(grep -c . <<<"$out")" = 4 ] || fail "c1, g1, inner, child: $out"
matches "$(line "$out" 2)" "\[\[\"child:$hex\",\"inner:$hex\"\],\{\"g1\":\{\"log\":\[\"g1\"\]\}\}\]" \
  "the grandchild's namespace"
contains "$(line "$out" 3)" '"],{"inner":{"log":' "the child's inner update"
expect_rc 0 "$bin" graph n.lua --xray=1
contains "$out" '        child_3ainner("inner")' "--xray=1: the grandchild is one node"
lacks "$out" 'g1' "--xray=1: no grandchild nodes"
expect_rc 0 "$bin" graph n.lua --xray
contains "$out" '        subgraph child_3ainner["inner"]
            child_3ainner_3ag1("g1")
        end' "--xray: every level"
contains "$out" '    child_3ac1 --> child_3ainner_3ag1' "--xray: into the grandchild"
contains "$out" '    child_3ainner_3ag1 --> __end__' "--xray: out of the grandchild"

# Usage errors.
expect_rc 2 "$bin" run g.lua --db :memory: --input '{}' --subgraphs
contains "$err" "--subgraphs needs --stream" "--subgraphs alone"
expect_rc 2 "$bin" graph g.lua --xray=deep
contains "$err" "--xray: expected --xray or --xray=N" "bad --xray"
expect_rc 0 "$bin" run --help
contains "$out" "--subgraphs" "run's usage names --subgraphs"
expect_rc 0 "$bin" graph --help
contains "$out" "--xray" "graph's usage names --xray"

if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)"
  exit 1
fi
echo "all CLI subgraph checks passed"
