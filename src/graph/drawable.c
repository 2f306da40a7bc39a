/* SPDX-License-Identifier: MIT */
/*
 * The graph as data: LangGraph's drawable graph (get_graph(xray=...)) and its
 * Graph.to_json() shape, and that graph drawn as LangGraph's Mermaid text.
 *
 * The nodes are START, the graph's nodes in the order they were added, and
 * END once an edge reaches it. The edges are those LangGraph's dry run of a
 * StateGraph finds, sorted as tuples (source, target, conditional, label):
 * static edges and join sources (solid), path-map branches (conditional,
 * labelled with the key when it is not the target's name), node destinations
 * (conditional); a static edge or join into END is not an edge of its own:
 * nodes that are a target but never a source get a solid edge to END after
 * the others. One edge per (source, target), the first in that order. Two
 * differences: a router without a path map may go to every node and END (the
 * Mermaid and DOT drawings say the same), and every node's edges are drawn,
 * not only those of nodes a dry run from START reaches.
 *
 * With xray, each subgraph node is replaced by its child's drawable graph
 * (itself with xray - 1), its ids prefixed "node:", as LangGraph's
 * draw_graph does: the child's START is dropped when it has one edge and
 * another node would still be first, its END likewise, and the parent's
 * edges into and out of the node go to the child's first and from its last
 * node.
 */
#include <string.h>

#include "draw.h"
#include "values/build.h"

typedef enum dkind { D_START, D_END, D_NODE, D_GRAPH } dkind;

typedef struct dnode {
    char *id;
    dkind kind;
    sst_value *metadata; /* owned non-empty object, or NULL */
} dnode;

typedef struct dedge {
    char *src, *dst, *label; /* owned; label may be NULL */
    bool cond;
} dedge;

typedef struct dgraph {
    dnode *nodes;
    size_t n, cap;
    dedge *edges;
    size_t ne, cape;
    bool oom;
} dgraph;

static void dg_free(dgraph *g) {
    for (size_t i = 0; i < g->n; i++) {
        sst__free(g->nodes[i].id);
        sst_value_unref(g->nodes[i].metadata);
    }
    for (size_t i = 0; i < g->ne; i++) {
        sst__free(g->edges[i].src);
        sst__free(g->edges[i].dst);
        sst__free(g->edges[i].label);
    }
    sst__free(g->nodes);
    sst__free(g->edges);
}

static char *dup_or_oom(dgraph *g, const char *s) {
    if (s == NULL) {
        return NULL;
    }
    char *c = sst__strndup(s, strlen(s));
    if (c == NULL) {
        g->oom = true;
    }
    return c;
}

static size_t dg_find(const dgraph *g, const char *id) {
    for (size_t i = 0; i < g->n; i++) {
        if (strcmp(g->nodes[i].id, id) == 0) {
            return i;
        }
    }
    return SIZE_MAX;
}

/* Appends a node; takes @p id and @p metadata (NULL: none). */
static void dg_node_take(dgraph *g, char *id, dkind kind, sst_value *metadata) {
    if (id == NULL || !sst__grow((void **)&g->nodes, &g->cap, g->n, sizeof *g->nodes, 8)) {
        g->oom = true;
        sst__free(id);
        sst_value_unref(metadata);
        return;
    }
    g->nodes[g->n++] = (dnode){id, kind, metadata};
}

/* Appends an edge, taking the strings (NULL src/dst: out of memory). */
static void dg_edge_take(dgraph *g, char *src, char *dst, char *label, bool cond) {
    if (src == NULL || dst == NULL ||
        !sst__grow((void **)&g->edges, &g->cape, g->ne, sizeof *g->edges, 8)) {
        g->oom = true;
        sst__free(src);
        sst__free(dst);
        sst__free(label);
        return;
    }
    g->edges[g->ne++] = (dedge){src, dst, label, cond};
}

/* LangGraph's add_edge of the drawing: one edge per (source, target); END added on demand. */
static void dg_add_edge(dgraph *g, const char *src, const char *dst, const char *label, bool cond) {
    for (size_t i = 0; i < g->ne; i++) {
        if (strcmp(g->edges[i].src, src) == 0 && strcmp(g->edges[i].dst, dst) == 0) {
            return;
        }
    }
    if (strcmp(dst, SST_END) == 0 && dg_find(g, SST_END) == SIZE_MAX) {
        dg_node_take(g, dup_or_oom(g, SST_END), D_END, NULL);
    }
    dg_edge_take(g, dup_or_oom(g, src), dup_or_oom(g, dst), dup_or_oom(g, label), cond);
}

static bool excluded(const char *id, const char *exclude) {
    return exclude != NULL && strcmp(id, exclude) == 0;
}

/*
 * LangGraph's _first_node (@p last: _last_node): the one node, other than
 * @p exclude, that is the target (source) of no edge from (to) a node other
 * than @p exclude; SIZE_MAX when there is none or more than one.
 */
static size_t dg_end_node(const dgraph *g, bool last, const char *exclude) {
    size_t found = SIZE_MAX, count = 0;
    for (size_t i = 0; i < g->n; i++) {
        const char *id = g->nodes[i].id;
        if (excluded(id, exclude)) {
            continue;
        }
        bool linked = false;
        for (size_t k = 0; k < g->ne && !linked; k++) {
            const dedge *e = &g->edges[k];
            linked = last ? strcmp(e->src, id) == 0 && !excluded(e->dst, exclude)
                          : strcmp(e->dst, id) == 0 && !excluded(e->src, exclude);
        }
        if (!linked) {
            found = i;
            count++;
        }
    }
    return count == 1 ? found : SIZE_MAX;
}

/* Drops node @p i, keeping its edges (LangGraph's graph.nodes.pop). */
static void dg_remove_node_only(dgraph *g, size_t i) {
    sst__free(g->nodes[i].id);
    sst_value_unref(g->nodes[i].metadata);
    memmove(&g->nodes[i], &g->nodes[i + 1], (g->n - i - 1) * sizeof *g->nodes);
    g->n--;
}

/* Drops node @p i and its edges (LangGraph's remove_node). */
static void dg_remove_node(dgraph *g, size_t i) {
    const char *id = g->nodes[i].id;
    size_t k = 0;
    for (size_t j = 0; j < g->ne; j++) {
        dedge *e = &g->edges[j];
        if (strcmp(e->src, id) == 0 || strcmp(e->dst, id) == 0) {
            sst__free(e->src);
            sst__free(e->dst);
            sst__free(e->label);
        } else {
            g->edges[k++] = *e;
        }
    }
    g->ne = k;
    dg_remove_node_only(g, i);
}

/* LangGraph's trim_first_node (@p last: trim_last_node). */
static void dg_trim(dgraph *g, bool last) {
    size_t i = dg_end_node(g, last, NULL);
    if (i == SIZE_MAX || dg_end_node(g, last, g->nodes[i].id) == SIZE_MAX) {
        return;
    }
    size_t links = 0;
    for (size_t k = 0; k < g->ne; k++) {
        links += strcmp(last ? g->edges[k].dst : g->edges[k].src, g->nodes[i].id) == 0;
    }
    if (links == 1) {
        dg_remove_node(g, i);
    }
}

/* ---- the edges of one graph, before sorting ---- */

typedef struct raw_edge {
    const char *src, *dst, *label; /* borrowed from the compiled graph */
    bool cond;
} raw_edge;

typedef struct raw_edges {
    raw_edge *v;
    size_t n, cap;
    bool oom;
} raw_edges;

static int cmp_str_null(const char *a, const char *b) {
    if (a == NULL || b == NULL) {
        return (a != NULL) - (b != NULL);
    }
    return strcmp(a, b);
}

static int raw_cmp(const void *pa, const void *pb) {
    const raw_edge *a = pa, *b = pb;
    int c = strcmp(a->src, b->src);
    if (c == 0) {
        c = strcmp(a->dst, b->dst);
    }
    if (c == 0) {
        c = (int)a->cond - (int)b->cond;
    }
    return c != 0 ? c : cmp_str_null(a->label, b->label);
}

static void raw_add(raw_edges *r, const char *src, const char *dst, const char *label, bool cond) {
    raw_edge e = {src, dst, label, cond};
    for (size_t i = 0; i < r->n; i++) {
        if (raw_cmp(&r->v[i], &e) == 0) {
            return; /* a set, as LangGraph's */
        }
    }
    if (!sst__grow((void **)&r->v, &r->cap, r->n, sizeof *r->v, 8)) {
        r->oom = true;
        return;
    }
    r->v[r->n++] = e;
}

static void raw_edges_of(const sst_graph *g, raw_edges *r) {
    for (size_t i = 0; i < g->n_edges; i++) {
        if (strcmp(g->edges[i].to, SST_END) != 0) {
            raw_add(r, g->edges[i].from, g->edges[i].to, NULL, false);
        }
    }
    for (size_t i = 0; i < g->n_joins; i++) {
        for (size_t k = 0; k < g->joins[i].n && strcmp(g->joins[i].to, SST_END) != 0; k++) {
            raw_add(r, g->joins[i].from[k], g->joins[i].to, NULL, false);
        }
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        const sst__branch *br = &g->branches[i];
        size_t n = sst__branch_count(g, br);
        for (size_t k = 0; k < n; k++) {
            const char *label;
            const char *to = sst__branch_at(g, br, k, &label);
            raw_add(r, br->from, to, label, true);
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        for (size_t k = 0; k < g->nodes[i].n_ends; k++) {
            raw_add(r, g->nodes[i].name, g->nodes[i].ends[k], NULL, true);
        }
    }
}

/* The node's metadata with LangGraph's defer and __interrupt marks; NULL when empty. */
static sst_value *node_metadata(const sst_compiled_graph *cg, size_t i, bool *oom) {
    const sst__node *n = &cg->g->nodes[i];
    sst_error err = {0};
    sst_value *m = n->metadata != NULL && sst_is_object(n->metadata) ? sst_value_ref(n->metadata)
                                                                     : sst_object_empty();
    if (n->defer) {
        m = sst__set_take(m, "defer", sst_bool(true), &err);
    }
    bool before = cg->routes[i].interrupt_before, after = cg->routes[i].interrupt_after;
    if (before || after) {
        const char *how = before && after ? "before,after" : before ? "before" : "after";
        m = sst__set_take(m, "__interrupt", sst_string_new(how, &err), &err);
    }
    if (m == NULL) {
        *oom = true;
        return NULL;
    }
    if (sst_object_len(m) == 0) {
        sst_value_unref(m);
        return NULL;
    }
    return m;
}

static char *prefixed(dgraph *g, const char *prefix, const char *id) {
    size_t lp = strlen(prefix), li = strlen(id);
    char *s = sst__malloc(lp + 1 + li + 1);
    if (s == NULL) {
        g->oom = true;
        return NULL;
    }
    memcpy(s, prefix, lp);
    s[lp] = ':';
    memcpy(s + lp + 1, id, li + 1);
    return s;
}

static void build(const sst_compiled_graph *cg, unsigned xray, dgraph *out);

/* Replaces node @p name of @p g by @p child (LangGraph's subgraph replacement). */
static void expand(dgraph *g, const char *name, dgraph *child) {
    size_t at = dg_find(g, name);
    if (child->n <= 1 || at == SIZE_MAX || dg_end_node(child, false, NULL) == SIZE_MAX ||
        dg_end_node(child, true, NULL) == SIZE_MAX) {
        return;
    }
    dg_trim(child, false);
    dg_trim(child, true);
    size_t first = dg_end_node(child, false, NULL), last = dg_end_node(child, true, NULL);
    char *first_id = first != SIZE_MAX ? prefixed(g, name, child->nodes[first].id) : NULL;
    char *last_id = last != SIZE_MAX ? prefixed(g, name, child->nodes[last].id) : NULL;
    char *own = dup_or_oom(g, name);
    if (own == NULL) {
        sst__free(first_id);
        sst__free(last_id);
        return;
    }
    dg_remove_node_only(g, at);
    for (size_t i = 0; i < child->n; i++) {
        dnode *n = &child->nodes[i];
        dg_node_take(g, prefixed(g, own, n->id), n->kind,
                     n->metadata != NULL ? sst_value_ref(n->metadata) : NULL);
    }
    for (size_t i = 0; i < child->ne; i++) {
        const dedge *e = &child->edges[i];
        dg_edge_take(g, prefixed(g, own, e->src), prefixed(g, own, e->dst), dup_or_oom(g, e->label),
                     e->cond);
    }
    for (size_t i = 0; i < g->ne; i++) {
        dedge *e = &g->edges[i];
        if (strcmp(e->src, own) == 0 && last_id != NULL) {
            char *s = dup_or_oom(g, last_id);
            if (s != NULL) {
                sst__free(e->src);
                e->src = s;
            }
        }
        if (strcmp(e->dst, own) == 0 && first_id != NULL) {
            char *s = dup_or_oom(g, first_id);
            if (s != NULL) {
                sst__free(e->dst);
                e->dst = s;
            }
        }
    }
    sst__free(own);
    sst__free(first_id);
    sst__free(last_id);
}

static void build(const sst_compiled_graph *cg, unsigned xray, dgraph *out) {
    const sst_graph *g = cg->g;
    dg_node_take(out, dup_or_oom(out, SST_START), D_START, NULL);
    for (size_t i = 0; i < g->n_nodes; i++) {
        dg_node_take(out, dup_or_oom(out, g->nodes[i].name),
                     g->nodes[i].sub != NULL ? D_GRAPH : D_NODE, node_metadata(cg, i, &out->oom));
    }
    raw_edges r = {0};
    raw_edges_of(g, &r);
    out->oom |= r.oom;
    if (r.n > 1) {
        qsort(r.v, r.n, sizeof *r.v, raw_cmp);
    }
    for (size_t i = 0; i < r.n; i++) {
        dg_add_edge(out, r.v[i].src, r.v[i].dst, r.v[i].label, r.v[i].cond);
    }
    /* termini: targets that are never sources, in name order (r is sorted by source) */
    const char **termini = r.n > 0 ? sst__malloc(r.n * sizeof *termini) : NULL;
    size_t nt = 0;
    for (size_t i = 0; termini != NULL && i < r.n; i++) {
        const char *t = r.v[i].dst;
        bool skip = strcmp(t, SST_END) == 0;
        for (size_t k = 0; k < r.n && !skip; k++) {
            skip = strcmp(r.v[k].src, t) == 0;
        }
        for (size_t k = 0; k < nt && !skip; k++) {
            skip = strcmp(termini[k], t) == 0;
        }
        if (!skip) {
            size_t at = nt;
            while (at > 0 && strcmp(termini[at - 1], t) > 0) {
                termini[at] = termini[at - 1];
                at--;
            }
            termini[at] = t;
            nt++;
        }
    }
    out->oom |= r.n > 0 && termini == NULL;
    for (size_t k = 0; k < nt; k++) {
        dg_add_edge(out, termini[k], SST_END, NULL, false);
    }
    sst__free(termini);
    sst__free(r.v);
    for (size_t i = 0; xray > 0 && i < g->n_nodes; i++) {
        if (g->nodes[i].sub == NULL) {
            continue;
        }
        dgraph child = {0};
        build(g->nodes[i].sub, xray == SST_XRAY_ALL ? SST_XRAY_ALL : xray - 1, &child);
        out->oom |= child.oom;
        expand(out, g->nodes[i].name, &child);
        dg_free(&child);
    }
}

/* ---- as a value: Graph.to_json() ---- */

static sst_value *to_json(const dgraph *dg, sst_error *err) {
    sst_value *nodes = sst_array_empty(), *edges = sst_array_empty();
    for (size_t i = 0; i < dg->n; i++) {
        const dnode *n = &dg->nodes[i];
        sst_value *o = sst__set_take(sst_object_empty(), "id", sst_string_new(n->id, err), err);
        if (n->kind != D_END) {
            sst_value *cls =
                sst__push_take(sst_array_empty(), sst_string_new("superstep", err), err);
            cls = sst__push_take(
                cls, sst_string_new(n->kind == D_GRAPH ? "CompiledGraph" : "Node", err), err);
            sst_value *data = sst__set_take(sst_object_empty(), "id", cls, err);
            data = sst__set_take(data, "name", sst_string_new(n->id, err), err);
            o = sst__set_take(o, "type", sst_string_new("runnable", err), err);
            o = sst__set_take(o, "data", data, err);
        }
        if (n->metadata != NULL) {
            o = sst__set_take(o, "metadata", sst_value_ref(n->metadata), err);
        }
        nodes = sst__push_take(nodes, o, err);
    }
    for (size_t i = 0; i < dg->ne; i++) {
        const dedge *e = &dg->edges[i];
        sst_value *o =
            sst__set_take(sst_object_empty(), "source", sst_string_new(e->src, err), err);
        o = sst__set_take(o, "target", sst_string_new(e->dst, err), err);
        if (e->label != NULL) {
            o = sst__set_take(o, "data", sst_string_new(e->label, err), err);
        }
        if (e->cond) {
            o = sst__set_take(o, "conditional", sst_bool(true), err);
        }
        edges = sst__push_take(edges, o, err);
    }
    sst_value *g = sst__set_take(sst_object_empty(), "nodes", nodes, err);
    return sst__set_take(g, "edges", edges, err);
}

sst_value *sst_compiled_graph_json(const sst_compiled_graph *cg, unsigned xray, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (cg == NULL) {
        sst__error(err, SST_EINVAL, "draw: NULL compiled graph");
        return NULL;
    }
    dgraph dg = {0};
    build(cg, xray, &dg);
    sst_value *v = NULL;
    if (dg.oom) {
        sst__enomem(err);
    } else {
        v = to_json(&dg, err);
    }
    dg_free(&dg);
    return v;
}

/* ---- LangGraph's Mermaid text of a drawable graph ---- */

static const char *str_at(const sst_value *o, const char *key) {
    const sst_value *v = sst_object_get(o, key);
    return v != NULL && sst_is_string(v) ? sst_string_cstr(v) : NULL;
}

/* A Mermaid id: [a-zA-Z0-9_-] kept, any other character as "\" and its code point in hex. */
static void safe_id(sst__buf *b, const char *s) {
    const unsigned char *p = (const unsigned char *)s;
    while (*p != '\0') {
        unsigned c = *p;
        if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
            c == '_' || c == '-') {
            sst__buf_putc(b, (char)c);
            p++;
            continue;
        }
        size_t len = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
        unsigned cp = len == 1 ? c : c & (0xFFu >> (len + 1));
        size_t k = 1;
        for (; k < len && (p[k] & 0xC0) == 0x80; k++) {
            cp = (cp << 6) | (p[k] & 0x3Fu);
        }
        sst__buf_printf(b, "\\%x", cp);
        p += k;
    }
}

/* The part of @p id after its last ':'. */
static const char *last_part(const char *id) {
    const char *c = strrchr(id, ':');
    return c != NULL ? c + 1 : id;
}

/* Length of @p id's prefix: everything before its last ':' (0: none). */
static size_t prefix_len(const char *id) {
    const char *c = strrchr(id, ':');
    return c != NULL ? (size_t)(c - id) : 0;
}

static bool md_special(char c) {
    return c == '*' || c == '_' || c == '`';
}

/* Python's str() of a metadata value. */
static void py_str(sst__buf *b, const sst_value *v) {
    if (sst_is_string(v)) {
        sst__buf_append(b, sst_string_cstr(v), strlen(sst_string_cstr(v)));
    } else if (sst_is_bool(v)) {
        sst__buf_append(b, sst_bool_value(v) ? "True" : "False", sst_bool_value(v) ? 4 : 5);
    } else if (sst_is_null(v)) {
        sst__buf_append(b, "None", 4);
    } else {
        char *text = sst_json_write(v, SST_JSON_COMPACT, NULL, NULL);
        if (text == NULL) {
            b->oom = true;
            return;
        }
        sst__buf_append(b, text, strlen(text));
        sst_free(text);
    }
}

typedef struct mermaid {
    sst__buf b;
    const sst_value *nodes, *edges;
    const char *first, *last; /* ids of the graph's first and last node, or NULL */
    bool styles;
    const char **seen; /* subgraph names drawn */
    size_t n_seen;
    char **prefixes; /* per edge: its group (the common parts of source and target) */
    sst_error *err;
    bool failed;
} mermaid;

static void render_node(mermaid *m, const sst_value *node) {
    const char *id = str_at(node, "id");
    if (id == NULL) {
        return;
    }
    const char *name = last_part(id);
    size_t ln = strlen(name);
    bool p = ln > 0 && md_special(name[0]) && md_special(name[ln - 1]);
    bool first = m->first != NULL && strcmp(id, m->first) == 0;
    bool last = m->last != NULL && strcmp(id, m->last) == 0;
    sst__buf_putc(&m->b, '\t');
    safe_id(&m->b, id);
    sst__buf_append(&m->b, first || last ? "([" : "(", first || last ? 2 : 1);
    sst__buf_printf(&m->b, p ? "<p>%s</p>" : "%s", name);
    const sst_value *md = sst_object_get(node, "metadata");
    if (md != NULL && sst_is_object(md) && sst_object_len(md) > 0) {
        sst__buf_append(&m->b, "<hr/><small><em>", 16);
        for (size_t k = 0; k < sst_object_len(md); k++) {
            sst__buf_printf(&m->b, "%s%s = ", k > 0 ? "\n" : "",
                            sst_string_cstr(sst_object_key_at(md, k)));
            py_str(&m->b, sst_object_value_at(md, k));
        }
        sst__buf_append(&m->b, "</em></small>", 13);
    }
    sst__buf_append(&m->b, first || last ? "])" : ")", first || last ? 2 : 1);
    if (first || last) {
        sst__buf_append(&m->b, first ? ":::first" : ":::last", first ? 8 : 7);
    }
    sst__buf_putc(&m->b, '\n');
}

/* The nodes whose prefix is exactly @p prefix (@p len bytes). */
static void render_nodes_in(mermaid *m, const char *prefix, size_t len) {
    for (size_t i = 0; i < sst_array_len(m->nodes); i++) {
        const char *id = str_at(sst_array_get(m->nodes, i), "id");
        if (id != NULL && prefix_len(id) == len && len > 0 && strncmp(id, prefix, len) == 0) {
            render_node(m, sst_array_get(m->nodes, i));
        }
    }
}

static void render_edge(mermaid *m, const sst_value *e) {
    const char *src = str_at(e, "source"), *dst = str_at(e, "target");
    if (src == NULL || dst == NULL) {
        return;
    }
    const sst_value *c = sst_object_get(e, "conditional");
    bool cond = c != NULL && sst_is_bool(c) && sst_bool_value(c);
    const sst_value *data = sst_object_get(e, "data");
    sst__buf_putc(&m->b, '\t');
    safe_id(&m->b, src);
    if (data != NULL && !sst_is_null(data)) {
        sst__buf label;
        sst__buf_init(&label);
        py_str(&label, data);
        sst__buf_putc(&label, '\0');
        /* words split on whitespace, 9 to a line */
        sst__buf_append(&m->b, cond ? " -. &nbsp;" : " -- &nbsp;", 10);
        size_t words = 0;
        const char *p = label.data != NULL ? label.data : "";
        size_t total = 0;
        for (const char *q = p; *q != '\0';) {
            while (*q == ' ' || (*q >= '\t' && *q <= '\r')) {
                q++;
            }
            if (*q != '\0') {
                total++;
            }
            while (*q != '\0' && !(*q == ' ' || (*q >= '\t' && *q <= '\r'))) {
                q++;
            }
        }
        if (total <= 9) {
            sst__buf_append(&m->b, p, strlen(p));
        } else {
            for (const char *q = p; *q != '\0';) {
                while (*q == ' ' || (*q >= '\t' && *q <= '\r')) {
                    q++;
                }
                if (*q == '\0') {
                    break;
                }
                const char *w = q;
                while (*q != '\0' && !(*q == ' ' || (*q >= '\t' && *q <= '\r'))) {
                    q++;
                }
                if (words > 0) {
                    sst__buf_append(&m->b, words % 9 == 0 ? "&nbsp<br>&nbsp" : " ",
                                    words % 9 == 0 ? 14 : 1);
                }
                sst__buf_append(&m->b, w, (size_t)(q - w));
                words++;
            }
        }
        m->b.oom |= label.oom;
        sst__buf_free(&label);
        sst__buf_append(&m->b, cond ? "&nbsp; .-> " : "&nbsp; --> ", 11);
    } else {
        sst__buf_append(&m->b, cond ? " -.-> " : " --> ", cond ? 6 : 5);
    }
    safe_id(&m->b, dst);
    sst__buf_append(&m->b, ";\n", 2);
}

/* The group of edges @p prefix in order of first appearance: index of its first edge. */
static bool group_first(const mermaid *m, size_t i) {
    for (size_t k = 0; k < i; k++) {
        if (strcmp(m->prefixes[k], m->prefixes[i]) == 0) {
            return false;
        }
    }
    return true;
}

static void add_subgraph(mermaid *m, const char *prefix) {
    size_t n_edges = 0;
    const sst_value *only = NULL;
    for (size_t i = 0; i < sst_array_len(m->edges); i++) {
        if (strcmp(m->prefixes[i], prefix) == 0) {
            n_edges++;
            only = sst_array_get(m->edges, i);
        }
    }
    bool self_loop = n_edges == 1 && str_at(only, "source") != NULL &&
                     str_at(only, "target") != NULL &&
                     strcmp(str_at(only, "source"), str_at(only, "target")) == 0;
    bool block = prefix[0] != '\0' && !self_loop;
    if (block) {
        const char *name = last_part(prefix);
        for (size_t k = 0; k < m->n_seen; k++) {
            if (strcmp(m->seen[k], name) == 0) {
                sst__error(
                    m->err, SST_EINVAL,
                    "draw_mermaid: duplicate subgraph '%s': subgraph nodes need unique names",
                    name);
                m->failed = true;
                return;
            }
        }
        m->seen[m->n_seen++] = name;
        sst__buf_printf(&m->b, "\tsubgraph %s\n", name);
        if (m->styles) {
            render_nodes_in(m, prefix, strlen(prefix));
        }
    }
    for (size_t i = 0; i < sst_array_len(m->edges); i++) {
        if (strcmp(m->prefixes[i], prefix) == 0) {
            render_edge(m, sst_array_get(m->edges, i));
        }
    }
    size_t lp = strlen(prefix);
    for (size_t i = 0; i < sst_array_len(m->edges) && !m->failed; i++) {
        const char *np = m->prefixes[i];
        if (!group_first(m, i) || strncmp(np, prefix, lp) != 0 || np[lp] != ':' ||
            strchr(np + lp + 1, ':') != NULL) {
            continue;
        }
        add_subgraph(m, np);
    }
    if (block) {
        sst__buf_append(&m->b, "\tend\n", 5);
    }
}

/* The ':'-parts @p a and @p b have equal at the same positions, joined with ':'. */
static char *common_parts(const char *a, const char *b) {
    sst__buf out;
    sst__buf_init(&out);
    bool any = false;
    while (*a != '\0' || *b != '\0') {
        size_t la = strcspn(a, ":"), lb = strcspn(b, ":");
        if (la == lb && strncmp(a, b, la) == 0) {
            if (any) {
                sst__buf_putc(&out, ':');
            }
            sst__buf_append(&out, a, la);
            any = true;
        }
        if (a[la] == '\0' || b[lb] == '\0') {
            break; /* zip stops at the shorter */
        }
        a += la + 1;
        b += lb + 1;
    }
    sst__buf_putc(&out, '\0');
    return sst__buf_detach(&out, NULL);
}

/* The node that no edge enters (@p last: leaves), if there is exactly one. */
static const char *end_id(const sst_value *nodes, const sst_value *edges, bool last) {
    const char *found = NULL;
    size_t count = 0;
    for (size_t i = 0; i < sst_array_len(nodes); i++) {
        const char *id = str_at(sst_array_get(nodes, i), "id");
        bool linked = id == NULL;
        for (size_t k = 0; k < sst_array_len(edges) && !linked; k++) {
            const char *end = str_at(sst_array_get(edges, k), last ? "source" : "target");
            linked = end != NULL && strcmp(end, id) == 0;
        }
        if (!linked) {
            found = id;
            count++;
        }
    }
    return count == 1 ? found : NULL;
}

char *sst_graph_json_mermaid(const sst_value *graph, bool with_styles, sst_error *err) {
    SST__ERR_LOCAL(err);
    const sst_value *nodes = graph != NULL ? sst_object_get(graph, "nodes") : NULL;
    const sst_value *edges = graph != NULL ? sst_object_get(graph, "edges") : NULL;
    if (nodes == NULL || edges == NULL || !sst_is_array(nodes) || !sst_is_array(edges)) {
        sst__error(err, SST_EINVAL,
                   "draw_mermaid: expected a graph {nodes = [...], edges = [...]}");
        return NULL;
    }
    size_t ne = sst_array_len(edges), nn = sst_array_len(nodes);
    mermaid m = {.nodes = nodes, .edges = edges, .styles = with_styles, .err = err};
    sst__buf_init(&m.b);
    m.first = end_id(nodes, edges, false);
    m.last = end_id(nodes, edges, true);
    m.prefixes = sst__calloc(ne + 1, sizeof *m.prefixes);
    m.seen = sst__calloc(2 * ne + 1, sizeof *m.seen);
    bool oom = m.prefixes == NULL || m.seen == NULL;
    for (size_t i = 0; i < ne && !oom; i++) {
        const char *s = str_at(sst_array_get(edges, i), "source");
        const char *t = str_at(sst_array_get(edges, i), "target");
        m.prefixes[i] = common_parts(s != NULL ? s : "", t != NULL ? t : "");
        oom = m.prefixes[i] == NULL;
    }
    if (!oom) {
        sst__buf_append(&m.b,
                        with_styles
                            ? "---\nconfig:\n  flowchart:\n    curve: linear\n---\ngraph TD;\n"
                            : "graph TD;\n",
                        with_styles ? 57 : 10);
        if (with_styles) {
            for (size_t i = 0; i < nn; i++) {
                const char *id = str_at(sst_array_get(nodes, i), "id");
                if (id != NULL && strchr(id, ':') == NULL) {
                    render_node(&m, sst_array_get(nodes, i));
                }
            }
        }
        add_subgraph(&m, "");
        for (size_t i = 0; i < ne && !m.failed; i++) {
            if (m.prefixes[i][0] == '\0' || strchr(m.prefixes[i], ':') != NULL ||
                !group_first(&m, i)) {
                continue;
            }
            add_subgraph(&m, m.prefixes[i]);
            m.seen[m.n_seen++] = m.prefixes[i];
        }
        /* subgraphs with nodes but no edges of their own */
        for (size_t i = 0; with_styles && i < nn && !m.failed; i++) {
            const char *id = str_at(sst_array_get(nodes, i), "id");
            size_t lp = id != NULL ? prefix_len(id) : 0;
            if (lp == 0 || memchr(id, ':', lp) != NULL) {
                continue;
            }
            bool seen = false;
            for (size_t k = 0; k < m.n_seen && !seen; k++) {
                seen = strlen(m.seen[k]) == lp && strncmp(m.seen[k], id, lp) == 0;
            }
            for (size_t k = 0; k < i && !seen; k++) { /* drawn with an earlier node */
                const char *o = str_at(sst_array_get(nodes, k), "id");
                seen = o != NULL && prefix_len(o) == lp && strncmp(o, id, lp) == 0;
            }
            if (!seen) {
                sst__buf_printf(&m.b, "\tsubgraph %.*s\n", (int)lp, id);
                render_nodes_in(&m, id, lp);
                sst__buf_append(&m.b, "\tend\n", 5);
            }
        }
        if (with_styles) {
            static const char styles[] = "\tclassDef default fill:#f2f0ff,line-height:1.2\n"
                                         "\tclassDef first fill-opacity:0\n"
                                         "\tclassDef last fill:#bfb6fc\n";
            sst__buf_append(&m.b, styles, sizeof styles - 1);
        }
    }
    for (size_t i = 0; m.prefixes != NULL && i < ne; i++) {
        sst__free(m.prefixes[i]);
    }
    sst__free(m.prefixes);
    sst__free(m.seen);
    if (m.failed) {
        sst__buf_free(&m.b);
        return NULL;
    }
    char *out = oom ? NULL : sst__buf_detach(&m.b, NULL);
    if (oom) {
        sst__buf_free(&m.b);
    }
    if (out == NULL) {
        sst__enomem(err);
    }
    return out;
}
