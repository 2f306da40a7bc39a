/* SPDX-License-Identifier: MIT */
/*
 * The graph layer's "draw" level (see graph_int.h for the stack): what
 * drawable.c needs of draw.c.
 */
#ifndef SUPERSTEP_GRAPH_DRAW_H
#define SUPERSTEP_GRAPH_DRAW_H

#include "graph_int.h"

/*
 * The drawings' reading of a branch (draw.c): how many places @p br may go
 * to (a router without a path map: every node, then END), and the k-th with
 * its path-map key as @p label (NULL when the key is the target's name).
 */
size_t sst__branch_count(const sst_graph *g, const sst__branch *br);
const char *sst__branch_at(const sst_graph *g, const sst__branch *br, size_t k, const char **label);

#endif /* SUPERSTEP_GRAPH_DRAW_H */
