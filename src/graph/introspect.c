/* SPDX-License-Identifier: MIT */
/*
 * Looking into a compiled graph from outside: which of its nodes run a
 * subgraph (LangGraph's Pregel.get_subgraphs, one level; the server's
 * GET /assistants/{id}/subgraphs walks the levels with it). The drawings
 * (draw.c) and sst_compiled_graph_subgraph (subgraph.c) read the same
 * records.
 */
#include "graph_int.h"

const sst_compiled_graph *sst_compiled_graph_subgraph_at(const sst_compiled_graph *cg, size_t i,
                                                         const char **name) {
    if (cg == NULL) {
        return NULL;
    }
    /* Linear in the nodes for each call: graphs have tens of nodes, and an index kept in the
     * compiled graph would cost every graph for the sake of this rare question. */
    const sst_graph *g = cg->g;
    for (size_t k = 0; k < g->n_nodes; k++) {
        if (g->nodes[k].sub == NULL) {
            continue;
        }
        if (i-- == 0) {
            if (name != NULL) {
                *name = g->nodes[k].name;
            }
            return g->nodes[k].sub;
        }
    }
    return NULL;
}
