/* SPDX-License-Identifier: MIT */
/*
 * The graph layer's "invoke" level (see graph_int.h for the stack): an
 * invoke (invoke.c), as a subgraph's run too, and START's routing.
 */
#ifndef SUPERSTEP_GRAPH_INVOKE_H
#define SUPERSTEP_GRAPH_INVOKE_H

#include "graph_node.h"

/* The Command{graph = PARENT} that ended the run of @p r (borrowed), or NULL. */
const sst_value *sst__result_parent_command(const sst_graph_result *r);
/* What a subgraph's run gets from its parent's (subgraph.c -> invoke.c). */
typedef struct sst__nested {
    const char *replay_from;  /* the root's time travel: the checkpoint replayed from, or NULL */
    bool start_empty;         /* the thread starts with no state: it had none at that point */
    const sst_value *targets; /* time travel to a subgraph's checkpoint: {ns: id}, or NULL */
    bool loaded; /* the thread is loaded at the invoke's checkpoint_id already: not read again */
    struct sst__writer *writer; /* durability "async": the root invoke's writer, or NULL */
} sst__nested;
/*
 * Invokes as sst_graph_invoke, as a subgraph's run (@p nested NULL: nothing more), without
 * taking the thread's lock (its parent holds it).
 */
sst_graph_result *sst__graph_invoke_nested(const sst_compiled_graph *cg, sst_graph_thread *thread,
                                           const sst_value *input, const sst_invoke_opts *opts,
                                           const sst__nested *nested, sst_error *err);
/* START's routing on @p state (invoke.c). */
sst_code sst__start_routing(const sst_compiled_graph *cg, const sst_value *state,
                            sst_value **targets, sst_error *err);

#endif /* SUPERSTEP_GRAPH_INVOKE_H */
