# shellcheck shell=bash
# The layers of src/ (DESIGN.md "Layers") and the levels of src/graph's stack
# (docs/graph.md "Source layout", src/graph/graph_int.h), lowest first; sourced by
# tools/check-layers.sh (includes) and tools/check-layers-symbols.sh (symbols).

# The rank of a folder of src/, or -1. Folders of one rank may use each other.
layer_rank() {
  case "$1" in
    common) echo 0 ;; values) echo 1 ;; checkpoint) echo 2 ;; store) echo 2 ;; queue) echo 2 ;;
    reducers) echo 3 ;;
    pregel) echo 4 ;;
    graph) echo 5 ;; agent) echo 6 ;; lua) echo 7 ;; server) echo 8 ;; cli) echo 9 ;;
    *) echo -1 ;;
  esac
}
# The level of a file of src/graph (.c or private header), lowest first.
graph_level() {
  case "$1" in
    graph_int.h|names.c|route.c|public.c|pending.c|interrupts.c|node_opts.c|record.c|thread.c|writer.c)
      echo 0 ;; # state: records, names, routing values, pending writes, checkpoint records
    graph_persist.h|persist.c|snapshot.c|history.c)
      echo 1 ;; # persist: a durable thread's checkpoints, snapshots, history
    stream.h|stream.c|live.c)
      echo 2 ;; # stream: an invoke's stream and live events
    run_ctx.h|run_ctx.c)
      echo 3 ;; # run context: an invoke's context and its accessors
    graph_node.h|node.c|functional.c|command.c)
      echo 4 ;; # node: the node runner, the functional API, Command
    graph_invoke.h|invoke.c)
      echo 5 ;; # invoke: a run of a graph
    graph_subgraph.h|subgraph.c|update.c)
      echo 6 ;; # subgraph: subgraph nodes and update_state, both invoking graphs
    builder.c|introspect.c)
      echo 7 ;; # compile: the builder, compiling onto the levels below
    draw.h|draw.c|drawable.c)
      echo 8 ;; # draw: drawings of a compiled graph
    *) echo -1 ;;
  esac
}
graph_level_name() {
  case "$1" in
    0) echo state ;; 1) echo persist ;; 2) echo stream ;; 3) echo run-context ;; 4) echo node ;;
    5) echo invoke ;; 6) echo subgraph ;; 7) echo compile ;; 8) echo draw ;;
  esac
}

