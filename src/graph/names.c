/* SPDX-License-Identifier: MIT */
/*
 * Names (state layer, see graph_int.h): a node by its name, the interrupt
 * lists' names checked, the subgraph a node runs, and the namespace strings
 * of subgraph runs ("parent|node:task").
 */
#include <stdatomic.h>
#include <string.h>

#include "graph_int.h"
#include "values/build.h"

size_t sst__graph_find(const sst_graph *g, const char *name) {
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (strcmp(g->nodes[i].name, name) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

sst_code sst__check_interrupt_lists(const sst_graph *g, const char *const *before, size_t n_before,
                                    const char *const *after, size_t n_after, const char *who,
                                    sst_error *err) {
    for (int k = 0; k < 2; k++) {
        const char *const *list = k ? after : before;
        size_t n = k ? n_after : n_before;
        for (size_t i = 0; list != NULL && i < n; i++) {
            if (list[i] == NULL ||
                (strcmp(list[i], SST_ALL_NODES) != 0 && sst__graph_find(g, list[i]) == SIZE_MAX)) {
                return sst__error(err, SST_EINVAL, "%s: interrupt_%s names unknown node '%s'", who,
                                  k ? "after" : "before", list[i] != NULL ? list[i] : "(NULL)");
            }
        }
    }
    return SST_OK;
}

const sst_compiled_graph *sst__subgraph_of(const sst_compiled_graph *cg, const char *node) {
    size_t i = cg != NULL && node != NULL ? sst__graph_find(cg->g, node) : SIZE_MAX;
    if (i == SIZE_MAX) {
        return NULL;
    }
    return cg->g->nodes[i].sub != NULL ? cg->g->nodes[i].sub : atomic_load(&cg->ran_sub[i]);
}

/* ---- namespaces ---- */

char *sst__subgraph_ns(const sst_compiled_graph *child, const char *parent_ns, const char *node,
                       const char *task_id) {
    sst__buf b;
    sst__buf_init(&b);
    sst__buf_printf(&b, "%s%s%s", parent_ns, parent_ns[0] != '\0' ? "|" : "", node);
    if (child == NULL || child->checkpoints != SST_SUBGRAPH_KEEP) {
        sst__buf_printf(&b, ":%s", task_id);
    } else if (strchr(task_id, '|') != NULL) {
        /* a kept child keeps the subgraph counter: "node|k" for a node's k-th subgraph */
        sst__buf_printf(&b, "%s", strchr(task_id, '|'));
    }
    return sst__buf_detach(&b, NULL);
}

size_t sst__parent_ns_len(const char *ns, size_t len) {
    while (len > 0 && ns[len - 1] != '|') {
        len--;
    }
    return len > 0 ? len - 1 : 0;
}
