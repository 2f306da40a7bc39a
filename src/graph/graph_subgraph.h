/* SPDX-License-Identifier: MIT */
/*
 * The graph layer's "subgraph" level (see graph_int.h for the stack):
 * subgraph nodes running their child graph (subgraph.c) and update_state
 * (update.c), both invoking graphs.
 */
#ifndef SUPERSTEP_GRAPH_SUBGRAPH_H
#define SUPERSTEP_GRAPH_SUBGRAPH_H

#include "graph_invoke.h"

/* The node function of every subgraph node: runs the child graph @p user_data. */
sst_code sst__subgraph_node(sst_node_ctx *ctx, void *user_data);

#endif /* SUPERSTEP_GRAPH_SUBGRAPH_H */
