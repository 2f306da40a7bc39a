/* SPDX-License-Identifier: MIT */
/*
 * Building a StateGraph and compiling it: validation (every error names the
 * culprit), routing tables, and the Pregel vertex set (one vertex a node).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "graph_subgraph.h"
#include "superstep/functional.h"
#include "values/build.h"

#define GROW(arr, n, cap) ((n) < (cap) ? true : grow_array((void **)&(arr), &(cap), sizeof *(arr)))

static bool grow_array(void **arr, size_t *cap, size_t elem) {
    size_t ncap = *cap ? *cap * 2 : 8;
    void *p = sst__realloc(*arr, ncap * elem);
    if (p == NULL) {
        return false;
    }
    *arr = p;
    *cap = ncap;
    return true;
}

static char *dup(const char *s) {
    return sst__strndup(s, strlen(s));
}

sst_graph *sst_graph_new(sst_error *err) {
    sst_graph *g = sst__calloc(1, sizeof *g);
    if (g == NULL) {
        sst__enomem(err);
        return NULL;
    }
    g->schema = sst_schema_new(err);
    if (g->schema == NULL) {
        sst__free(g);
        return NULL;
    }
    return g;
}

static void node_free(sst__node *n) {
    sst__free(n->name);
    sst__free(n->handler);
    sst_value_unref(n->metadata);
    sst_value_unref(n->input_fields);
    sst__free(n->retry_list);
    for (size_t i = 0; i < n->n_ends; i++) {
        sst__free(n->ends[i]);
    }
    sst__free(n->ends);
}

void sst_graph_free(sst_graph *g) {
    if (g == NULL) {
        return;
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        node_free(&g->nodes[i]);
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        sst__free(g->edges[i].from);
        sst__free(g->edges[i].to);
    }
    for (size_t i = 0; i < g->n_joins; i++) {
        for (size_t k = 0; k < g->joins[i].n; k++) {
            sst__free(g->joins[i].from[k]);
        }
        sst__free(g->joins[i].from);
        sst__free(g->joins[i].to);
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        sst__free(g->branches[i].from);
        sst_value_unref(g->branches[i].path_map);
    }
    sst__free(g->nodes);
    sst__free(g->edges);
    sst__free(g->joins);
    sst__free(g->branches);
    sst_value_unref(g->input_fields);
    sst_value_unref(g->output_fields);
    sst_value_unref(g->untracked_fields);
    sst__free(g->default_retry);
    sst_schema_free(g->schema);
    sst__free(g);
}

sst_schema *sst_graph_schema(sst_graph *g) {
    return g != NULL ? g->schema : NULL;
}

sst_code sst_graph_add_field(sst_graph *g, const char *field, const sst_reducer *r,
                             sst_value *default_value, sst_error *err) {
    if (g == NULL || field == NULL) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL, "graph: add field: NULL %s",
                          g == NULL ? "graph" : "field");
    }
    if (strncmp(field, "__", 2) == 0) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL,
                          "graph: field '%s': names starting with \"__\" are reserved", field);
    }
    if (g->root) {
        sst_value_unref(default_value);
        return sst__error(err, SST_EINVAL,
                          "graph: field '%s': the graph has a root state (sst_graph_set_root)",
                          field);
    }
    return sst_schema_add_field(g->schema, field, r, default_value, err);
}

void sst_node_opts_init(sst_node_opts *o) {
    /* No retry unless the node asks for one (LangGraph's default): one attempt, the
     * other fields as the default policy. */
    sst_retry_policy_init(&o->retry);
    o->retry.max_attempts = 1;
    o->metadata = NULL;
    o->ends = NULL;
    o->n_ends = 0;
    o->defer = false;
    o->input_fields = NULL;
    o->n_input_fields = 0;
    o->retry_policies = NULL;
    o->n_retry_policies = 0;
    memset(&o->timeout, 0, sizeof o->timeout);
    o->error_handler = NULL;
    o->error_handler_user_data = NULL;
    memset(&o->cache_policy, 0, sizeof o->cache_policy);
}

static sst_code add_node(sst_graph *g, const char *name, sst_node_fn fn, void *user_data,
                         const sst_node_opts *opts, bool handler, sst_error *err);

/* Adds node @p name's error handler node and names it as the node's handler. */
static sst_code add_handler(sst_graph *g, const char *name, const sst_node_opts *opts,
                            sst_error *err) {
    char hname[sizeof SST__HANDLER_PREFIX + 256];
    snprintf(hname, sizeof hname, "%s%s", SST__HANDLER_PREFIX, name);
    if (sst__graph_find(g, hname) != SIZE_MAX) {
        return sst__error(err, SST_EINVAL, "graph: error handler node '%s' already exists", hname);
    }
    sst_node_opts ho;
    sst_node_opts_init(&ho);
    ho.input_fields = opts->input_fields;
    ho.n_input_fields = opts->n_input_fields;
    sst_code rc =
        add_node(g, hname, opts->error_handler, opts->error_handler_user_data, &ho, true, err);
    if (rc != SST_OK) {
        return rc;
    }
    sst__node *n = &g->nodes[sst__graph_find(g, name)];
    n->handler = dup(hname);
    if (n->handler == NULL) {
        return sst__enomem(err);
    }
    return SST_OK;
}

sst_code sst_graph_add_node(sst_graph *g, const char *name, sst_node_fn fn, void *user_data,
                            const sst_node_opts *opts, sst_error *err) {
    return add_node(g, name, fn, user_data, opts, false, err);
}

/* @p handler: an error handler node, whose reserved name is made here. */
static sst_code add_node(sst_graph *g, const char *name, sst_node_fn fn, void *user_data,
                         const sst_node_opts *opts, bool handler, sst_error *err) {
    if (g == NULL || name == NULL || fn == NULL) {
        return sst__error(err, SST_EINVAL, "graph: add node: NULL %s",
                          g == NULL      ? "graph"
                          : name == NULL ? "name"
                                         : "function");
    }
    if (name[0] == '\0') {
        return sst__error(err, SST_EINVAL, "graph: add node: empty name");
    }
    if (!handler && (strcmp(name, SST_START) == 0 || strcmp(name, SST_END) == 0 ||
                     strncmp(name, "__", 2) == 0)) {
        return sst__error(err, SST_EINVAL, "graph: node name '%s' is reserved", name);
    }
    if (!sst_utf8_valid(name, strlen(name)) || strlen(name) > (handler ? 300 : 255)) {
        return sst__error(err, SST_EINVAL, "graph: node name must be 1..255 bytes of UTF-8");
    }
    if (sst__graph_find(g, name) != SIZE_MAX) {
        return sst__error(err, SST_EINVAL, "graph: duplicate node '%s'", name);
    }
    sst_node_opts defaults;
    if (opts == NULL) {
        sst_node_opts_init(&defaults);
        opts = &defaults;
    }
    if (!(opts->cache_policy.ttl_s >= 0)) {
        return sst__error(err, SST_EINVAL, "graph: node '%s': cache ttl must be >= 0 seconds",
                          name);
    }
    if (!sst_timeout_policy_valid(&opts->timeout)) {
        return sst__error(err, SST_EINVAL,
                          "graph: node '%s': a timeout must be a positive number of seconds", name);
    }
    if (!GROW(g->nodes, g->n_nodes, g->cap_nodes)) {
        return sst__enomem(err);
    }
    sst__node *n = &g->nodes[g->n_nodes];
    memset(n, 0, sizeof *n);
    n->name = dup(name);
    n->fn = fn;
    n->user_data = user_data;
    n->retry = opts->retry;
    n->defer = opts->defer;
    n->timeout = opts->timeout;
    n->cache = opts->cache_policy;
    n->is_handler = handler;
    n->metadata = sst_value_ref(opts->metadata != NULL ? opts->metadata : sst_null());
    n->ends = opts->n_ends ? sst__calloc(opts->n_ends, sizeof *n->ends) : NULL;
    bool ok = n->name != NULL && (opts->n_ends == 0 || n->ends != NULL);
    for (size_t i = 0; ok && i < opts->n_ends; i++) {
        n->ends[i] = opts->ends[i] != NULL ? dup(opts->ends[i]) : NULL;
        ok = n->ends[i] != NULL;
        n->n_ends = i + 1;
    }
    if (!ok) {
        node_free(n);
        return sst__enomem(err);
    }
    sst_code rc = sst__node_opts_copy(n, opts, err);
    if (rc != SST_OK) {
        node_free(n);
        return rc;
    }
    g->n_nodes++;
    if (opts->error_handler != NULL && !handler) {
        rc = add_handler(g, name, opts, err);
        if (rc != SST_OK) { /* take the node back: the graph is as before the call */
            size_t k = sst__graph_find(g, name);
            node_free(&g->nodes[k]);
            memmove(&g->nodes[k], &g->nodes[k + 1], (g->n_nodes - k - 1) * sizeof *g->nodes);
            g->n_nodes--;
        }
    }
    return rc;
}

sst_code sst_graph_add_edge(sst_graph *g, const char *from, const char *to, sst_error *err) {
    if (g == NULL || from == NULL || to == NULL) {
        return sst__error(err, SST_EINVAL, "graph: add edge: NULL argument");
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        if (strcmp(g->edges[i].from, from) == 0 && strcmp(g->edges[i].to, to) == 0) {
            return SST_OK; /* the same edge twice is one edge */
        }
    }
    if (!GROW(g->edges, g->n_edges, g->cap_edges)) {
        return sst__enomem(err);
    }
    sst__edge *e = &g->edges[g->n_edges];
    e->from = dup(from);
    e->to = dup(to);
    if (e->from == NULL || e->to == NULL) {
        sst__free(e->from);
        sst__free(e->to);
        return sst__enomem(err);
    }
    g->n_edges++;
    return SST_OK;
}

sst_code sst_graph_add_join(sst_graph *g, const char *const *from, size_t n, const char *to,
                            sst_error *err) {
    if (g == NULL || from == NULL || n == 0 || to == NULL) {
        return sst__error(err, SST_EINVAL, "graph: add join: needs sources and a target");
    }
    if (n == 1) {
        return sst_graph_add_edge(g, from[0], to, err);
    }
    if (!GROW(g->joins, g->n_joins, g->cap_joins)) {
        return sst__enomem(err);
    }
    sst__join *j = &g->joins[g->n_joins];
    j->from = sst__calloc(n, sizeof *j->from);
    j->to = dup(to);
    j->n = 0;
    bool ok = j->from != NULL && j->to != NULL;
    for (size_t i = 0; ok && i < n; i++) {
        ok = from[i] != NULL && (j->from[i] = dup(from[i])) != NULL;
        j->n = ok ? i + 1 : i;
    }
    if (!ok) {
        for (size_t i = 0; i < j->n; i++) {
            sst__free(j->from[i]);
        }
        sst__free(j->from);
        sst__free(j->to);
        return sst__error(err, SST_ENOMEM, "out of memory (or a NULL join source)");
    }
    g->n_joins++;
    return SST_OK;
}

/* Frees the nodes and edges added after the first @p n_nodes and @p n_edges. */
static void truncate_graph(sst_graph *g, size_t n_nodes, size_t n_edges) {
    while (g->n_nodes > n_nodes) {
        node_free(&g->nodes[--g->n_nodes]);
    }
    while (g->n_edges > n_edges) {
        g->n_edges--;
        sst__free(g->edges[g->n_edges].from);
        sst__free(g->edges[g->n_edges].to);
    }
}

sst_code sst_graph_add_sequence(sst_graph *g, const sst_sequence_node *nodes, size_t n,
                                sst_error *err) {
    if (g == NULL || nodes == NULL || n == 0) {
        return sst__error(err, SST_EINVAL, "graph: add sequence: %s",
                          g == NULL ? "NULL graph" : "a sequence needs at least one node");
    }
    /* Edges dedupe against existing ones, so new edges are always appended: on
     * failure, truncating back to the old counts undoes this call. */
    size_t n_nodes = g->n_nodes, n_edges = g->n_edges;
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < n; i++) {
        rc = sst_graph_add_node(g, nodes[i].name, nodes[i].fn, nodes[i].user_data, nodes[i].opts,
                                err);
        if (rc != SST_OK) {
            sst__error_prefix(err, "add sequence: node %zu", i + 1);
        }
    }
    for (size_t i = 1; rc == SST_OK && i < n; i++) {
        rc = sst_graph_add_edge(g, nodes[i - 1].name, nodes[i].name, err);
    }
    if (rc != SST_OK) {
        truncate_graph(g, n_nodes, n_edges);
    }
    return rc;
}

/* Sets *slot to a new array of the @p n names (NULL for n == 0). */
static sst_code set_fields(sst_graph *g, sst_value **slot, const char *what,
                           const char *const *fields, size_t n, sst_error *err) {
    if (g == NULL || (fields == NULL && n > 0)) {
        return sst__error(err, SST_EINVAL, "graph: %s fields: NULL %s", what,
                          g == NULL ? "graph" : "list");
    }
    sst_value *list = n > 0 ? sst_array_empty() : NULL;
    for (size_t i = 0; i < n; i++) {
        if (fields[i] == NULL || strncmp(fields[i], "__", 2) == 0) {
            sst_value_unref(list);
            return sst__error(err, SST_EINVAL, "graph: %s field '%s': %s", what,
                              fields[i] != NULL ? fields[i] : "(NULL)",
                              fields[i] != NULL ? "names starting with \"__\" are reserved"
                                                : "NULL name");
        }
        sst_value *name = sst_string_new(fields[i], err);
        list = name != NULL ? sst_array_push_take(list, name, err) : (sst_value_unref(list), NULL);
        if (list == NULL) {
            return sst__code(err);
        }
    }
    sst_value_unref(*slot);
    *slot = list;
    return SST_OK;
}

sst_code sst_graph_set_input_fields(sst_graph *g, const char *const *fields, size_t n,
                                    sst_error *err) {
    return set_fields(g, g != NULL ? &g->input_fields : NULL, "input", fields, n, err);
}

sst_code sst_graph_set_untracked_fields(sst_graph *g, const char *const *fields, size_t n,
                                        sst_error *err) {
    return set_fields(g, g != NULL ? &g->untracked_fields : NULL, "untracked", fields, n, err);
}

sst_code sst_graph_set_output_fields(sst_graph *g, const char *const *fields, size_t n,
                                     sst_error *err) {
    return set_fields(g, g != NULL ? &g->output_fields : NULL, "output", fields, n, err);
}

sst_code sst_graph_add_conditional_edges(sst_graph *g, const char *from, sst_router_fn router,
                                         void *user_data, const sst_value *path_map,
                                         sst_error *err) {
    if (g == NULL || from == NULL || router == NULL) {
        return sst__error(err, SST_EINVAL, "graph: add conditional edges: NULL argument");
    }
    if (path_map != NULL && !sst_is_object(path_map) && !sst_is_array(path_map)) {
        return sst__error(err, SST_ETYPE,
                          "graph: conditional edges from '%s': the path map must be an object or "
                          "a list of node names, got %s",
                          from, sst_type_name(sst_value_type(path_map)));
    }
    if (!GROW(g->branches, g->n_branches, g->cap_branches)) {
        return sst__enomem(err);
    }
    sst__branch *b = &g->branches[g->n_branches];
    b->from = dup(from);
    if (b->from == NULL) {
        return sst__enomem(err);
    }
    b->router = router;
    b->user_data = user_data;
    b->path_map = path_map != NULL ? sst_value_ref(path_map) : NULL;
    g->n_branches++;
    return SST_OK;
}

/* ---- subgraph and entrypoint nodes (run by subgraph.c and functional.c) ---- */

sst_code sst_graph_add_subgraph(sst_graph *g, const char *name, const sst_compiled_graph *child,
                                const sst_node_opts *opts, sst_error *err) {
    if (child == NULL) {
        return sst__error(err, SST_EINVAL, "graph: subgraph node '%s': NULL compiled graph",
                          name != NULL ? name : "(null)");
    }
    /* The child is the node's user data: a compiled graph is immutable. */
    sst_code rc = sst_graph_add_node(g, name, sst__subgraph_node, (void *)child, opts, err);
    if (rc == SST_OK) {
        g->nodes[sst__graph_find(g, name)].sub = child; /* its error handler may follow it */
    }
    return rc;
}

sst_code sst_graph_set_entrypoint(sst_graph *g, const char *name, sst_node_fn fn, void *user_data,
                                  const sst_node_opts *opts, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (g == NULL || fn == NULL) {
        return sst__error(err, SST_EINVAL, "entrypoint: %s",
                          g == NULL ? "NULL graph" : "NULL function");
    }
    if (g->n_nodes > 0 || g->root || g->entrypoint || sst_schema_field_count(g->schema) > 0) {
        return sst__error(err, SST_EINVAL,
                          "entrypoint: the graph must be empty (no fields, nodes or root state)");
    }
    sst_code rc = sst_graph_set_root(g, NULL, NULL, err);
    if (rc == SST_OK) {
        rc = sst_schema_add_field(g->schema, SST_ENTRY_INPUT, sst_reducer_replace(), NULL, err);
    }
    if (rc == SST_OK) {
        rc = sst_schema_add_field(g->schema, SST_ENTRY_PREVIOUS, sst_reducer_replace(), NULL, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_node(g, name, sst__entry_node, NULL, opts, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, SST_START, name, err);
    }
    if (rc == SST_OK) {
        rc = sst_graph_add_edge(g, name, SST_END, err);
    }
    if (rc == SST_OK) {
        g->entrypoint = true;
        g->entry_fn = fn;
        g->entry_user_data = user_data;
    }
    return rc;
}

/* ---- compile ---- */

void sst_compile_opts_init(sst_compile_opts *o) {
    memset(o, 0, sizeof *o);
}

/* Adds the default error handler node to a graph copy and names it on every node without one. */
static sst_code add_default_handler(sst_graph *g, sst_node_fn fn, void *user_data, sst_error *err);

/* Copies the builder's records so the compiled graph does not depend on it. */
static sst_graph *graph_copy(const sst_graph *g, sst_error *err) {
    sst_graph *c = sst_graph_new(err);
    if (c == NULL) {
        return NULL;
    }
    sst_schema_free(c->schema);
    c->schema = NULL;
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < g->n_nodes; i++) {
        const sst__node *n = &g->nodes[i];
        sst_node_opts o;
        sst_node_opts_init(&o);
        o.retry = n->retry;
        o.metadata = n->metadata;
        o.ends = (const char *const *)n->ends;
        o.n_ends = n->n_ends;
        o.defer = n->defer;
        o.timeout = n->timeout;
        o.cache_policy = n->cache;
        rc = add_node(c, n->name, n->fn, n->user_data, &o, n->is_handler, err);
        if (rc == SST_OK) {
            sst__node *cn = &c->nodes[c->n_nodes - 1];
            cn->input_fields = n->input_fields != NULL ? sst_value_ref(n->input_fields) : NULL;
            cn->sub = n->sub;
            if (n->handler != NULL && (cn->handler = dup(n->handler)) == NULL) {
                rc = sst__enomem(err);
            }
            if (rc == SST_OK) {
                rc = sst__retry_list_copy(&cn->retry_list, &cn->n_retry_list, n->retry_list,
                                          n->n_retry_list, err);
            }
        }
    }
    if (rc == SST_OK) {
        c->root = g->root;
        c->entrypoint = g->entrypoint;
        c->entry_fn = g->entry_fn;
        c->entry_user_data = g->entry_user_data;
        c->default_timeout = g->default_timeout;
        c->default_cache = g->default_cache;
        rc = sst__retry_list_copy(&c->default_retry, &c->n_default_retry, g->default_retry,
                                  g->n_default_retry, err);
    }
    if (rc == SST_OK && g->default_handler != NULL) {
        rc = add_default_handler(c, g->default_handler, g->default_handler_user_data, err);
    }
    for (size_t i = 0; rc == SST_OK && i < g->n_edges; i++) {
        rc = sst_graph_add_edge(c, g->edges[i].from, g->edges[i].to, err);
    }
    for (size_t i = 0; rc == SST_OK && i < g->n_joins; i++) {
        const sst__join *j = &g->joins[i];
        if (strcmp(j->to, SST_END) == 0) {
            /* A join into END waits for nothing that follows: its sources just end
             * their branches, as edges to END do (and are drawn so). */
            for (size_t k = 0; rc == SST_OK && k < j->n; k++) {
                rc = sst_graph_add_edge(c, j->from[k], SST_END, err);
            }
            continue;
        }
        rc = sst_graph_add_join(c, (const char *const *)j->from, j->n, j->to, err);
    }
    for (size_t i = 0; rc == SST_OK && i < g->n_branches; i++) {
        const sst__branch *b = &g->branches[i];
        rc = sst_graph_add_conditional_edges(c, b->from, b->router, b->user_data, b->path_map, err);
    }
    c->input_fields = g->input_fields != NULL ? sst_value_ref(g->input_fields) : NULL;
    c->output_fields = g->output_fields != NULL ? sst_value_ref(g->output_fields) : NULL;
    c->untracked_fields = g->untracked_fields != NULL ? sst_value_ref(g->untracked_fields) : NULL;
    if (rc != SST_OK) {
        sst_graph_free(c);
        return NULL;
    }
    return c;
}

/* Checks that @p name is a node (or END when @p end_ok). */
static sst_code check_target(const sst_graph *g, const char *what, const char *name, bool end_ok,
                             sst_error *err) {
    if (strcmp(name, SST_END) == 0) {
        return end_ok ? SST_OK : sst__error(err, SST_EINVAL, "%s: END cannot be used here", what);
    }
    if (strcmp(name, SST_START) == 0) {
        return sst__error(err, SST_EINVAL, "%s: START cannot be the target of an edge", what);
    }
    if (sst__graph_find(g, name) == SIZE_MAX) {
        return sst__error(err, SST_EINVAL, "%s: unknown node '%s'", what, name);
    }
    return SST_OK;
}

static sst_code check_source(const sst_graph *g, const char *what, const char *name,
                             sst_error *err) {
    if (strcmp(name, SST_START) == 0) {
        return SST_OK;
    }
    if (strcmp(name, SST_END) == 0) {
        return sst__error(err, SST_EINVAL, "%s: END cannot be the source of an edge", what);
    }
    if (sst__graph_find(g, name) == SIZE_MAX) {
        return sst__error(err, SST_EINVAL, "%s: unknown node '%s'", what, name);
    }
    return SST_OK;
}

/* A new description of a graph part for errors ("edge 'a' -> 'b'"), or NULL on OOM. */
static char *what_of(const char *fmt, ...) SST_PRINTF(1, 2);
static char *what_of(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap);
    va_end(ap);
    char *s = n >= 0 ? sst__malloc((size_t)n + 1) : NULL;
    if (s != NULL) {
        va_start(ap, fmt);
        vsnprintf(s, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    return s;
}

static sst_code check_edge(const sst_graph *g, const sst__edge *e, sst_error *err) {
    char *what = what_of("edge '%s' -> '%s'", e->from, e->to);
    if (what == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = check_source(g, what, e->from, err);
    if (rc == SST_OK) {
        rc = check_target(g, what, e->to, true, err);
    }
    sst__free(what);
    return rc;
}

static sst_code check_join(const sst_graph *g, const sst__join *j, sst_error *err) {
    char *what = what_of("join into '%s'", j->to);
    if (what == NULL) {
        return sst__enomem(err);
    }
    sst_code rc = SST_OK;
    for (size_t k = 0; rc == SST_OK && k < j->n; k++) {
        rc = strcmp(j->from[k], SST_START) == 0
                 ? sst__error(err, SST_EINVAL, "%s: START cannot be one of its sources", what)
                 : check_source(g, what, j->from[k], err);
    }
    if (rc == SST_OK) {
        rc = check_target(g, what, j->to, true, err);
    }
    sst__free(what);
    return rc;
}

static sst_code check_branch(const sst_graph *g, const sst__branch *b, sst_error *err) {
    char *what = what_of("conditional edges from '%s'", b->from);
    char *pm = what_of("conditional edges from '%s': path map", b->from);
    sst_code rc =
        what != NULL && pm != NULL ? check_source(g, what, b->from, err) : sst__enomem(err);
    size_t n = sst_object_len(b->path_map) + sst_array_len(b->path_map);
    for (size_t k = 0; rc == SST_OK && b->path_map != NULL && k < n; k++) {
        const sst_value *v = sst_is_object(b->path_map) ? sst_object_value_at(b->path_map, k)
                                                        : sst_array_get(b->path_map, k);
        rc = sst_is_string(v)
                 ? check_target(g, pm, sst_string_cstr(v), true, err)
                 : sst__error(err, SST_ETYPE, "%s: path map values must be node names", what);
    }
    sst__free(what);
    sst__free(pm);
    return rc;
}

static sst_code validate(const sst_graph *g, sst_error *err) {
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < g->n_edges; i++) {
        rc = check_edge(g, &g->edges[i], err);
    }
    for (size_t i = 0; rc == SST_OK && i < g->n_joins; i++) {
        rc = check_join(g, &g->joins[i], err);
    }
    for (size_t i = 0; rc == SST_OK && i < g->n_branches; i++) {
        rc = check_branch(g, &g->branches[i], err);
    }
    for (size_t i = 0; rc == SST_OK && i < g->n_nodes; i++) {
        char *what = what_of("goto destinations of '%s'", g->nodes[i].name);
        rc = what != NULL ? SST_OK : sst__enomem(err);
        for (size_t k = 0; rc == SST_OK && k < g->nodes[i].n_ends; k++) {
            rc = check_target(g, what, g->nodes[i].ends[k], true, err);
        }
        sst__free(what);
    }
    return rc;
}

/* Marks what START reaches; @p seen has one slot per node plus one for END. */
static void reach(const sst_graph *g, bool *seen) {
    size_t n = g->n_nodes, end = n;
    bool changed = true;
    bool start_done = false;
    while (changed) {
        changed = false;
        for (size_t src = 0; src <= n; src++) {
            /* src == n stands for START here (END has no outgoing edges). */
            const char *name = src == n ? SST_START : g->nodes[src].name;
            if (src == n ? start_done : !seen[src]) {
                continue;
            }
            bool *mark = seen;
#define MARK(target)                                                                               \
    do {                                                                                           \
        size_t t_ = strcmp((target), SST_END) == 0 ? end : sst__graph_find(g, (target));           \
        if (t_ != SIZE_MAX && !mark[t_]) {                                                         \
            mark[t_] = changed = true;                                                             \
        }                                                                                          \
    } while (0)
            for (size_t i = 0; i < g->n_edges; i++) {
                if (strcmp(g->edges[i].from, name) == 0) {
                    MARK(g->edges[i].to);
                }
            }
            for (size_t i = 0; i < g->n_branches; i++) {
                const sst__branch *b = &g->branches[i];
                if (strcmp(b->from, name) != 0) {
                    continue;
                }
                if (b->path_map == NULL) {
                    for (size_t k = 0; k < n; k++) { /* a free router may go anywhere */
                        MARK(g->nodes[k].name);
                    }
                    MARK(SST_END);
                }
                for (size_t k = 0; k < sst_object_len(b->path_map); k++) {
                    MARK(sst_string_cstr(sst_object_value_at(b->path_map, k)));
                }
                for (size_t k = 0; k < sst_array_len(b->path_map); k++) {
                    MARK(sst_string_cstr(sst_array_get(b->path_map, k)));
                }
            }
            if (src < n) {
                for (size_t k = 0; k < g->nodes[src].n_ends; k++) {
                    MARK(g->nodes[src].ends[k]);
                }
            }
#undef MARK
            if (src == n) {
                start_done = true;
            }
        }
        for (size_t i = 0; i < g->n_joins; i++) {
            const sst__join *j = &g->joins[i];
            bool all = true;
            for (size_t k = 0; k < j->n; k++) {
                size_t s = sst__graph_find(g, j->from[k]);
                all = all && s != SIZE_MAX && seen[s];
            }
            size_t t = strcmp(j->to, SST_END) == 0 ? end : sst__graph_find(g, j->to);
            if (all && t != SIZE_MAX && !seen[t]) {
                seen[t] = changed = true;
            }
        }
    }
}

static bool has_entry(const sst_graph *g) {
    for (size_t i = 0; i < g->n_edges; i++) {
        if (strcmp(g->edges[i].from, SST_START) == 0) {
            return true;
        }
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        if (strcmp(g->branches[i].from, SST_START) == 0) {
            return true;
        }
    }
    return false;
}

static bool push_index(size_t **arr, size_t *n, size_t v) {
    size_t *p = sst__realloc(*arr, (*n + 1) * sizeof **arr);
    if (p == NULL) {
        return false;
    }
    p[(*n)++] = v;
    *arr = p;
    return true;
}

static void route_free(sst__route *r) {
    sst__free(r->edges);
    sst__free(r->branches);
    sst__free(r->joins_in);
    sst__free(r->joins_out);
}

/* Fills the routing tables of START and every node. false on OOM. */
static bool build_routes(sst_compiled_graph *cg) {
    const sst_graph *g = cg->g;
    for (size_t i = 0; i < g->n_edges; i++) {
        const sst__edge *e = &g->edges[i];
        if (strcmp(e->to, SST_END) == 0) {
            continue;
        }
        sst__route *r =
            strcmp(e->from, SST_START) == 0 ? &cg->start : &cg->routes[sst__graph_find(g, e->from)];
        if (!push_index(&r->edges, &r->n_edges, sst__graph_find(g, e->to))) {
            return false;
        }
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        const char *from = g->branches[i].from;
        sst__route *r =
            strcmp(from, SST_START) == 0 ? &cg->start : &cg->routes[sst__graph_find(g, from)];
        if (!push_index(&r->branches, &r->n_branches, i)) {
            return false;
        }
    }
    for (size_t i = 0; i < g->n_joins; i++) {
        const sst__join *j = &g->joins[i];
        for (size_t k = 0; k < j->n; k++) {
            sst__route *r = &cg->routes[sst__graph_find(g, j->from[k])];
            if (!push_index(&r->joins_in, &r->n_joins_in, i)) {
                return false;
            }
        }
        sst__route *t = &cg->routes[sst__graph_find(g, j->to)];
        if (!push_index(&t->joins_out, &t->n_joins_out, i)) {
            return false;
        }
    }
    return true;
}

/*
 * The barrier reducer: per join, per source, a count of arrivals; updates
 * add (+1 arrival, -1 consumption). Counting makes the merge order-free:
 * an arrival and a consumption in one superstep never cancel the wrong way.
 */
static sst_value *barrier_reduce(void *ud, const char *field, sst_value *cur, const sst_value *upd,
                                 sst_error *err) {
    SST_UNUSED(ud);
    SST_UNUSED(field);
    if (!sst_is_object(cur)) {
        sst_value_unref(cur);
        cur = sst_object_empty();
    }
    for (size_t i = 0; i < sst_object_len(upd) && cur != NULL; i++) {
        const sst_value *jkey = sst_object_key_at(upd, i);
        const sst_value *counts = sst_object_value_at(upd, i);
        sst_value *jv =
            sst_value_ref(sst_object_getn(cur, sst_string_cstr(jkey), sst_string_len(jkey)));
        if (jv == NULL) {
            jv = sst_object_empty();
        }
        for (size_t k = 0; k < sst_object_len(counts) && jv != NULL; k++) {
            const sst_value *src = sst_object_key_at(counts, k);
            int64_t now =
                sst_int_value(sst_object_getn(jv, sst_string_cstr(src), sst_string_len(src))) +
                sst_int_value(sst_object_value_at(counts, k));
            sst_value *nv = sst_int_new(now < 0 ? 0 : now, err);
            jv = nv != NULL ? sst_object_setv_take(jv, src, nv, err) : (sst_value_unref(jv), NULL);
        }
        cur = jv != NULL ? sst_object_setv_take(cur, jkey, jv, err) : (sst_value_unref(cur), NULL);
    }
    return cur;
}

void sst_compiled_graph_free(sst_compiled_graph *cg) {
    if (cg == NULL) {
        return;
    }
    if (cg->g != NULL && cg->routes != NULL) {
        for (size_t i = 0; i < cg->g->n_nodes; i++) {
            route_free(&cg->routes[i]);
        }
    }
    route_free(&cg->start);
    sst__free(cg->routes);
    sst__free(cg->refs);
    sst__free((void *)cg->ran_sub);
    sst__write_pool_free(cg->writers);
    sst_pregel_free(cg->pregel);
    sst_schema_free(cg->schema);
    sst_reducer_free(cg->barrier_reducer);
    for (size_t i = 0; i < cg->n_warnings; i++) {
        sst__free(cg->warnings[i]);
    }
    sst__free(cg->warnings);
    sst_graph_free(cg->g);
    sst_cache_free(cg->cache);
    sst_store_free(cg->store);
    sst__free(cg->cache_ns);
    sst__free(cg);
}

sst_code sst_compiled_graph_clear_cache(const sst_compiled_graph *cg, const char *const *nodes,
                                        size_t n, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (cg == NULL) {
        return sst__error(err, SST_EINVAL, "clear cache: NULL graph");
    }
    for (size_t i = 0; i < n; i++) {
        if (nodes == NULL || nodes[i] == NULL || sst__graph_find(cg->g, nodes[i]) == SIZE_MAX) {
            return sst__error(err, SST_EINVAL, "clear cache: unknown node '%s'",
                              nodes == NULL || nodes[i] == NULL ? "(null)" : nodes[i]);
        }
    }
    for (size_t i = 0; cg->cache != NULL && i < (n > 0 ? n : cg->g->n_nodes); i++) {
        sst_code rc = sst_cache_clear_vertex(cg->cache, cg->cache_ns,
                                             n > 0 ? nodes[i] : cg->g->nodes[i].name, err);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

static bool add_warning(sst_compiled_graph *cg, const char *text) {
    char **w = sst__realloc(cg->warnings, (cg->n_warnings + 1) * sizeof *w);
    if (w == NULL) {
        return false;
    }
    cg->warnings = w;
    w[cg->n_warnings] = dup(text);
    if (w[cg->n_warnings] == NULL) {
        return false;
    }
    cg->n_warnings++;
    return true;
}

/* Marks node @p k (every node for SIZE_MAX) to interrupt before or after it. */
static void mark_interrupt(sst_compiled_graph *cg, size_t k, bool after) {
    for (size_t i = k == SIZE_MAX ? 0 : k; i < (k == SIZE_MAX ? cg->g->n_nodes : k + 1); i++) {
        if (after) {
            cg->routes[i].interrupt_after = true;
        } else {
            cg->routes[i].interrupt_before = true;
        }
    }
}

/* Applies the interrupt lists (SST_ALL_NODES: every node); errors name an unknown node. */
static sst_code mark_interrupts(sst_compiled_graph *cg, const sst_compile_opts *o, sst_error *err) {
    sst_code rc = sst__check_interrupt_lists(cg->g, o->interrupt_before, o->n_before,
                                             o->interrupt_after, o->n_after, "compile", err);
    for (int after = 0; after < 2 && rc == SST_OK; after++) {
        const char *const *list = after ? o->interrupt_after : o->interrupt_before;
        size_t n = after ? o->n_after : o->n_before;
        for (size_t i = 0; i < n; i++) {
            bool all = strcmp(list[i], SST_ALL_NODES) == 0;
            mark_interrupt(cg, all ? SIZE_MAX : sst__graph_find(cg->g, list[i]), after);
        }
    }
    return rc;
}

/*
 * What START reaches: *end_reached tells whether it reaches END, and
 * *unreachable (new text, sst__malloc, or NULL when every node is reached)
 * is the warning that names the nodes no edge, path map or `ends` reaches.
 * Such a node may still run through a Command goto (LangGraph accepts it).
 */
static sst_code check_reachable(const sst_graph *g, bool *end_reached, char **unreachable,
                                sst_error *err) {
    *unreachable = NULL;
    bool *seen = sst__calloc(g->n_nodes + 1, sizeof *seen);
    if (seen == NULL) {
        return sst__enomem(err);
    }
    reach(g, seen);
    sst__buf list;
    sst__buf_init(&list);
    size_t count = 0;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (!seen[i] && !g->nodes[i].is_handler) { /* a handler runs when its node fails */
            sst__buf_printf(&list, "%s'%s'", count++ ? ", " : "", g->nodes[i].name);
        }
    }
    if (count > 0 && !seen[g->n_nodes]) {
        /* The unreachable nodes are presumably goto targets: END counts as reached when
         * they reach it (one warning about them is enough). */
        for (size_t i = 0; i < g->n_nodes; i++) {
            seen[i] = true;
        }
        reach(g, seen);
    }
    *end_reached = seen[g->n_nodes];
    sst__free(seen);
    if (count == 0) {
        sst__buf_free(&list);
        return SST_OK;
    }
    char *names = sst__buf_detach(&list, NULL); /* NUL-terminated */
    if (names != NULL) {
        sst__buf text;
        sst__buf_init(&text);
        sst__buf_printf(&text,
                        "node%s %s %s unreachable from START by edges (only a Command goto can "
                        "run %s; list goto targets in the source node's ends to declare it)",
                        count == 1 ? "" : "s", names, count == 1 ? "is" : "are",
                        count == 1 ? "it" : "them");
        *unreachable = sst__buf_detach(&text, NULL);
        sst__free(names);
    }
    return *unreachable != NULL ? SST_OK : sst__enomem(err);
}

/* A compiled graph for @p g without its vertex set: a copy of the graph, routes and schema. */
static sst_compiled_graph *compiled_new(const sst_graph *g, bool end_reached,
                                        const char *unreachable, sst_error *err) {
    sst_compiled_graph *cg = sst__calloc(1, sizeof *cg);
    if (cg == NULL) {
        sst__enomem(err);
        return NULL;
    }
    cg->g = graph_copy(g, err);
    if (cg->g == NULL) {
        sst_compiled_graph_free(cg);
        return NULL;
    }
    size_t n = cg->g->n_nodes; /* the copy may hold a default error handler more */
    cg->routes = sst__calloc(n, sizeof *cg->routes);
    cg->refs = sst__calloc(n, sizeof *cg->refs);
    cg->ran_sub = sst__calloc(n, sizeof *cg->ran_sub);
    cg->writers = sst__write_pool_new();
    cg->schema = sst_schema_copy(g->schema, err);
    cg->barrier_reducer = sst_reducer_new("barrier", barrier_reduce, NULL, err);
    if (cg->routes == NULL || cg->refs == NULL || cg->ran_sub == NULL || cg->writers == NULL ||
        cg->schema == NULL || cg->barrier_reducer == NULL || !build_routes(cg) ||
        sst_schema_add_field(cg->schema, SST__BARRIERS, cg->barrier_reducer, NULL, err) != SST_OK ||
        (unreachable != NULL && !add_warning(cg, unreachable)) ||
        (!end_reached &&
         !add_warning(cg, "no path from START reaches END: runs stop only when no node is "
                          "active"))) {
        sst__error_unless_set(err, SST_ENOMEM, "out of memory");
        sst_compiled_graph_free(cg);
        return NULL;
    }
    return cg;
}

/* Builds cg->pregel: one vertex per node (vertex i is node i), and the join commit hook. */
static sst_code build_pregel(sst_compiled_graph *cg, sst_error *err) {
    sst_pregel_builder *pb = sst_pregel_builder_new(cg->schema, err);
    sst_code rc = pb != NULL ? SST_OK : sst__code(err);
    for (size_t i = 0; rc == SST_OK && i < cg->g->n_nodes; i++) {
        cg->refs[i].cg = cg;
        cg->refs[i].index = i;
        sst_vertex_opts vo;
        sst_vertex_opts_init(&vo);
        const sst__node *n = &cg->g->nodes[i];
        vo.retry = sst__node_policy(cg->g, n);
        vo.defer = n->defer;
        vo.timeout = n->timeout.run_timeout_s > 0 || n->timeout.idle_timeout_s > 0
                         ? n->timeout
                         : cg->g->default_timeout;
        vo.error_vertex = n->handler;
        const sst_node_cache_policy *cp = n->cache.enabled ? &n->cache
                                          : n->is_handler  ? NULL
                                                           : &cg->g->default_cache;
        if (cp != NULL && cp->enabled) {
            vo.cache.enabled = true;
            vo.cache.ttl_s = cp->ttl_s;
            vo.cache.key = sst__node_cache_key;
            vo.cache.key_user_data = &cg->refs[i];
        }
        rc = sst_pregel_builder_add_vertex(pb, cg->g->nodes[i].name, sst__node_vertex, &cg->refs[i],
                                           &vo, err);
    }
    if (rc == SST_OK && cg->g->n_joins > 0) {
        sst_pregel_builder_set_commit_fn(pb, sst__graph_commit, cg);
    }
    if (rc == SST_OK) {
        cg->pregel = sst_pregel_builder_build(pb, err);
        rc = cg->pregel != NULL ? SST_OK : sst__code(err);
    }
    sst_pregel_builder_free(pb);
    return rc;
}

sst_compiled_graph *sst_graph_compile(const sst_graph *g, const sst_compile_opts *opts,
                                      sst_error *err) {
    sst_compile_opts defaults;
    if (opts == NULL) {
        sst_compile_opts_init(&defaults);
        opts = &defaults;
    }
    if (g == NULL) {
        sst__error(err, SST_EINVAL, "compile: NULL graph");
        return NULL;
    }
    if (g->n_nodes == 0) {
        sst__error(err, SST_EINVAL, "compile: the graph has no nodes");
        return NULL;
    }
    if (validate(g, err) != SST_OK) {
        return NULL;
    }
    if (!has_entry(g)) {
        sst__error(err, SST_EINVAL,
                   "compile: the graph has no entry point (add an edge or conditional edges from "
                   "START)");
        return NULL;
    }
    bool end_reached = false;
    char *unreachable;
    if (check_reachable(g, &end_reached, &unreachable, err) != SST_OK) {
        return NULL;
    }
    sst_compiled_graph *cg = compiled_new(g, end_reached, unreachable, err);
    sst__free(unreachable);
    if (cg == NULL) {
        return NULL;
    }
    cg->checkpoints = opts->checkpoints;
    if (!(opts->step_timeout_s >= 0)) {
        sst__error(err, SST_EINVAL, "compile: step_timeout must be a positive number of seconds");
        sst_compiled_graph_free(cg);
        return NULL;
    }
    cg->step_timeout_s = opts->step_timeout_s;
    cg->cache = opts->cache != NULL ? sst_cache_ref(opts->cache) : NULL;
    cg->store = opts->store != NULL ? sst_store_ref(opts->store) : NULL;
    const char *cns = opts->cache_ns != NULL ? opts->cache_ns : "";
    if ((cg->cache_ns = dup(cns)) == NULL) {
        sst__enomem(err);
        sst_compiled_graph_free(cg);
        return NULL;
    }
    if (mark_interrupts(cg, opts, err) != SST_OK || build_pregel(cg, err) != SST_OK) {
        sst_compiled_graph_free(cg);
        return NULL;
    }
    return cg;
}

size_t sst_compiled_graph_warning_count(const sst_compiled_graph *cg) {
    return cg != NULL ? cg->n_warnings : 0;
}

const char *sst_compiled_graph_warning(const sst_compiled_graph *cg, size_t i) {
    return cg != NULL && i < cg->n_warnings ? cg->warnings[i] : NULL;
}

const sst_value *sst_compiled_graph_node_metadata(const sst_compiled_graph *cg, const char *node) {
    size_t i = cg != NULL && node != NULL ? sst__graph_find(cg->g, node) : SIZE_MAX;
    return i != SIZE_MAX ? cg->g->nodes[i].metadata : NULL;
}

const sst_schema *sst_compiled_graph_schema(const sst_compiled_graph *cg) {
    return cg != NULL ? cg->schema : NULL;
}

const sst_value *sst_compiled_graph_input_fields(const sst_compiled_graph *cg) {
    return cg != NULL ? cg->g->input_fields : NULL;
}

const sst_value *sst_compiled_graph_output_fields(const sst_compiled_graph *cg) {
    return cg != NULL ? cg->g->output_fields : NULL;
}

sst_value *sst_compiled_graph_state_fields(const sst_compiled_graph *cg, sst_error *err) {
    if (cg == NULL) {
        sst__error(err, SST_EINVAL, "state fields: NULL compiled graph");
        return NULL;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_schema_field_count(cg->schema) && out != NULL; i++) {
        const char *f = sst_schema_field_name(cg->schema, i);
        if (strcmp(f, SST__BARRIERS) != 0) {
            out = sst_array_push_take(out, sst_string_new(f, err), err);
        }
    }
    return out;
}

static sst_code add_default_handler(sst_graph *g, sst_node_fn fn, void *user_data, sst_error *err) {
    sst_code rc = add_node(g, SST__DEFAULT_HANDLER, fn, user_data, NULL, true, err);
    for (size_t i = 0; rc == SST_OK && i < g->n_nodes; i++) {
        sst__node *n = &g->nodes[i];
        if (!n->is_handler && n->handler == NULL &&
            (n->handler = dup(SST__DEFAULT_HANDLER)) == NULL) {
            rc = sst__enomem(err);
        }
    }
    return rc;
}
