/* SPDX-License-Identifier: MIT */
/*
 * Drawing a compiled graph as a Mermaid flowchart or a Graphviz digraph.
 * Static edges are solid, conditional edges dashed (labelled with the path
 * map key when there is one; a router without a path map may go to every
 * node), goto destinations dotted, and each join is one junction that its
 * sources point into.
 *
 * With xray, a subgraph node is drawn as its child graph's nodes, named
 * "node:child" ("a:b:c" nested) and grouped in a Mermaid subgraph block or a
 * DOT cluster: edges into the node go to the child's entry nodes (the
 * targets of its START edges and branches), edges out of it leave from the
 * child's exit nodes (those that may go to END, or that route nowhere), as
 * LangGraph's get_graph(xray=...) rewires them.
 */
#include <string.h>

#include "draw.h"
#include "values/build.h"

/* Mermaid node ids may not contain spaces or punctuation: quote labels, sanitize ids. */
static void mermaid_id(sst__buf *b, const char *name) {
    for (const char *p = name; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '_' || c >= 0x80;
        if (ok) {
            sst__buf_putc(b, (char)c);
        } else {
            sst__buf_printf(b, "_%02x", c);
        }
    }
}

/* A label inside double quotes: '"' becomes #quot; as Mermaid expects. */
static void mermaid_label(sst__buf *b, const char *s) {
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '"') {
            sst__buf_append(b, "#quot;", 6);
        } else {
            sst__buf_putc(b, *p);
        }
    }
}

static void dot_escaped(sst__buf *b, const char *s) {
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            sst__buf_putc(b, '\\');
        }
        sst__buf_putc(b, *p);
    }
}

static void dot_quoted(sst__buf *b, const char *s) {
    sst__buf_putc(b, '"');
    dot_escaped(b, s);
    sst__buf_putc(b, '"');
}

typedef enum edge_style { SOLID, DASHED, DOTTED } edge_style;

typedef struct drawer {
    sst__buf b;
    bool dot;
} drawer;

static void node_decl(drawer *d, const char *name, const char *shape_mermaid) {
    if (d->dot) {
        sst__buf_append(&d->b, "  ", 2);
        dot_quoted(&d->b, name);
        const char *shape = strcmp(name, SST_START) == 0 || strcmp(name, SST_END) == 0
                                ? " [shape=oval];\n"
                                : " [shape=box];\n";
        sst__buf_append(&d->b, shape, strlen(shape));
        return;
    }
    sst__buf_append(&d->b, "    ", 4);
    mermaid_id(&d->b, name);
    sst__buf_printf(&d->b, shape_mermaid[0] == '(' && shape_mermaid[1] == '[' ? "([\"" : "(\"");
    mermaid_label(&d->b, name);
    sst__buf_printf(&d->b, shape_mermaid[0] == '(' && shape_mermaid[1] == '[' ? "\"])\n" : "\")\n");
}

static void edge(drawer *d, const char *from, const char *to, edge_style style, const char *label) {
    if (d->dot) {
        sst__buf_append(&d->b, "  ", 2);
        dot_quoted(&d->b, from);
        sst__buf_append(&d->b, " -> ", 4);
        dot_quoted(&d->b, to);
        if (style != SOLID || label != NULL) {
            sst__buf_append(&d->b, " [", 2);
            if (style != SOLID) {
                sst__buf_printf(&d->b, "style=%s", style == DASHED ? "dashed" : "dotted");
            }
            if (label != NULL) {
                sst__buf_append(&d->b,
                                style != SOLID ? ", label=" : "label=", style != SOLID ? 8 : 6);
                dot_quoted(&d->b, label);
            }
            sst__buf_putc(&d->b, ']');
        }
        sst__buf_append(&d->b, ";\n", 2);
        return;
    }
    sst__buf_append(&d->b, "    ", 4);
    mermaid_id(&d->b, from);
    if (style == SOLID) {
        sst__buf_append(&d->b, " --> ", 5);
    } else if (label != NULL) {
        sst__buf_append(&d->b, " -. \"", 5);
        mermaid_label(&d->b, label);
        sst__buf_append(&d->b, "\" .-> ", 6);
    } else {
        sst__buf_append(&d->b, " -.-> ", 6);
    }
    mermaid_id(&d->b, to);
    sst__buf_putc(&d->b, '\n');
}

/* ---- xray: levels of subgraphs drawn expanded ---- */

/* One graph being drawn: the root, or an expanded subgraph node's child. */
typedef struct level {
    const sst_compiled_graph *cg;
    const char *prefix; /* "" for the root, else "node:" ("a:b:" nested) */
    char *own;          /* owned prefix of a child level, or NULL */
    unsigned xray;      /* how many levels of subgraphs below this one are expanded */
} level;

static bool is_root(const level *l) {
    return l->prefix[0] == '\0';
}

/* The level of node @p i of @p l when it is drawn expanded (free out->own), else false. */
static bool sublevel(drawer *d, const level *l, size_t i, level *out) {
    const sst__node *n = &l->cg->g->nodes[i];
    if (l->xray == 0 || n->sub == NULL) {
        return false;
    }
    sst__buf p;
    sst__buf_init(&p);
    sst__buf_printf(&p, "%s%s:", l->prefix, n->name);
    char *prefix = sst__buf_detach(&p, NULL);
    if (prefix == NULL) {
        d->b.oom = true;
        return false;
    }
    *out = (level){n->sub, prefix, prefix, l->xray == SST_XRAY_ALL ? SST_XRAY_ALL : l->xray - 1};
    return true;
}

/* Full node names (prefix and name), each once. */
typedef struct names {
    char **v;
    size_t n, cap;
} names;

static void names_add(drawer *d, names *ns, const char *prefix, const char *name) {
    size_t lp = strlen(prefix), ln = strlen(name);
    for (size_t i = 0; i < ns->n; i++) {
        if (strncmp(ns->v[i], prefix, lp) == 0 && strcmp(ns->v[i] + lp, name) == 0) {
            return;
        }
    }
    if (ns->n == ns->cap) {
        size_t cap = ns->cap != 0 ? 2 * ns->cap : 4;
        char **v = sst__realloc(ns->v, cap * sizeof *v);
        if (v == NULL) {
            d->b.oom = true;
            return;
        }
        ns->v = v;
        ns->cap = cap;
    }
    char *s = sst__malloc(lp + ln + 1);
    if (s == NULL) {
        d->b.oom = true;
        return;
    }
    memcpy(s, prefix, lp);
    memcpy(s + lp, name, ln + 1);
    ns->v[ns->n++] = s;
}

static void names_free(names *ns) {
    for (size_t i = 0; i < ns->n; i++) {
        sst__free(ns->v[i]);
    }
    sst__free(ns->v);
}

size_t sst__branch_count(const sst_graph *g, const sst__branch *br) {
    if (br->path_map == NULL) {
        return g->n_nodes + 1; /* a router without a path map: every node, or END */
    }
    return sst_is_object(br->path_map) ? sst_object_len(br->path_map) : sst_array_len(br->path_map);
}

const char *sst__branch_at(const sst_graph *g, const sst__branch *br, size_t k,
                           const char **label) {
    *label = NULL;
    if (br->path_map == NULL) {
        return k < g->n_nodes ? g->nodes[k].name : SST_END;
    }
    if (!sst_is_object(br->path_map)) {
        return sst_string_cstr(sst_array_get(br->path_map, k));
    }
    const char *key = sst_string_cstr(sst_object_key_at(br->path_map, k));
    const char *to = sst_string_cstr(sst_object_value_at(br->path_map, k));
    *label = strcmp(key, to) == 0 ? NULL : key;
    return to;
}

/* True when node @p n of @p g may end its graph: it may go to END, or routes nowhere. */
static bool may_end(const sst_graph *g, const sst__node *n) {
    bool routes = n->n_ends > 0;
    for (size_t k = 0; k < n->n_ends; k++) {
        if (strcmp(n->ends[k], SST_END) == 0) {
            return true;
        }
    }
    for (size_t i = 0; i < g->n_edges; i++) {
        if (strcmp(g->edges[i].from, n->name) == 0) {
            routes = true;
            if (strcmp(g->edges[i].to, SST_END) == 0) {
                return true;
            }
        }
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        const sst__branch *br = &g->branches[i];
        const char *label;
        for (size_t k = 0; strcmp(br->from, n->name) == 0 && k < sst__branch_count(g, br); k++) {
            routes = true;
            if (strcmp(sst__branch_at(g, br, k, &label), SST_END) == 0) {
                return true;
            }
        }
    }
    for (size_t i = 0; i < g->n_joins; i++) {
        for (size_t k = 0; k < g->joins[i].n; k++) {
            if (strcmp(g->joins[i].from[k], n->name) == 0) {
                routes = true;
                if (strcmp(g->joins[i].to, SST_END) == 0) {
                    return true;
                }
            }
        }
    }
    return !routes;
}

static void endpoint(drawer *d, const level *l, const char *name, bool from, names *out);

/* The nodes edges into an expanded subgraph go to: where its START leads. */
static void entries(drawer *d, const level *l, names *out) {
    const sst_graph *g = l->cg->g;
    for (size_t i = 0; i < g->n_edges; i++) {
        if (strcmp(g->edges[i].from, SST_START) == 0) {
            endpoint(d, l, g->edges[i].to, false, out);
        }
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        const sst__branch *br = &g->branches[i];
        const char *label;
        for (size_t k = 0; strcmp(br->from, SST_START) == 0 && k < sst__branch_count(g, br); k++) {
            endpoint(d, l, sst__branch_at(g, br, k, &label), false, out);
        }
    }
}

/* The nodes edges out of an expanded subgraph leave from (may_end). */
static void exits(drawer *d, const level *l, names *out) {
    const sst_graph *g = l->cg->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        if (may_end(g, &g->nodes[i])) {
            endpoint(d, l, g->nodes[i].name, true, out);
        }
    }
}

/*
 * Where an end of an edge of @p l is drawn (@p from: its source): a node,
 * START / END of the root, or an expanded subgraph's exits (entries). A
 * child's own START and END are not drawn: its parent's edges replace them.
 */
static void endpoint(drawer *d, const level *l, const char *name, bool from, names *out) {
    if (strcmp(name, SST_START) == 0 || strcmp(name, SST_END) == 0) {
        if (is_root(l)) {
            names_add(d, out, "", name);
        }
        return;
    }
    size_t i = sst__graph_find(l->cg->g, name);
    level sub;
    if (i != SIZE_MAX && sublevel(d, l, i, &sub)) {
        if (from) {
            exits(d, &sub, out);
        } else {
            entries(d, &sub, out);
        }
        sst__free(sub.own);
        return;
    }
    names_add(d, out, l->prefix, name);
}

static void level_edge(drawer *d, const level *l, const char *from, const char *to,
                       edge_style style, const char *label) {
    names f = {0}, t = {0};
    endpoint(d, l, from, true, &f);
    endpoint(d, l, to, false, &t);
    for (size_t i = 0; i < f.n; i++) {
        for (size_t k = 0; k < t.n; k++) {
            edge(d, f.v[i], t.v[k], style, label);
        }
    }
    names_free(&f);
    names_free(&t);
}

/* The DOT id of join @p i of @p l: "join:i", "join:node:i" in a subgraph. */
static void dot_join_id(drawer *d, const level *l, size_t i) {
    sst__buf_append(&d->b, "\"join:", 6);
    dot_escaped(&d->b, l->prefix);
    sst__buf_printf(&d->b, "%zu\"", i);
}

/* Join @p i of @p l from @p f to @p t: one junction its sources point into. */
static void join_dot(drawer *d, const level *l, size_t i, const names *f, const names *t) {
    sst__buf_append(&d->b, "  ", 2);
    dot_join_id(d, l, i);
    sst__buf_append(&d->b, " [shape=point, label=\"\"];\n", 26);
    for (size_t k = 0; k < f->n; k++) {
        sst__buf_append(&d->b, "  ", 2);
        dot_quoted(&d->b, f->v[k]);
        sst__buf_append(&d->b, " -> ", 4);
        dot_join_id(d, l, i);
        sst__buf_append(&d->b, " [arrowhead=none];\n", 19);
    }
    for (size_t k = 0; k < t->n; k++) {
        sst__buf_append(&d->b, "  ", 2);
        dot_join_id(d, l, i);
        sst__buf_append(&d->b, " -> ", 4);
        dot_quoted(&d->b, t->v[k]);
        sst__buf_append(&d->b, ";\n", 2);
    }
}

/* Mermaid's own join syntax: a & b --> c (a & b --> c & d into a subgraph's entries). */
static void join_mermaid(drawer *d, const names *f, const names *t) {
    sst__buf_append(&d->b, "    ", 4);
    for (size_t k = 0; k < f->n + t->n; k++) {
        if (k == f->n) {
            sst__buf_append(&d->b, " --> ", 5);
        } else if (k > 0) {
            sst__buf_append(&d->b, " & ", 3);
        }
        mermaid_id(&d->b, k < f->n ? f->v[k] : t->v[k - f->n]);
    }
    sst__buf_putc(&d->b, '\n');
}

static void level_join(drawer *d, const level *l, size_t i) {
    const sst__join *j = &l->cg->g->joins[i];
    names f = {0}, t = {0};
    for (size_t k = 0; k < j->n; k++) {
        endpoint(d, l, j->from[k], true, &f);
    }
    endpoint(d, l, j->to, false, &t);
    if (f.n > 0 && t.n > 0) { /* a subgraph's join into its END: its exits carry it */
        if (d->dot) {
            join_dot(d, l, i, &f, &t);
        } else {
            join_mermaid(d, &f, &t);
        }
    }
    names_free(&f);
    names_free(&t);
}

/* Every edge of @p l, then those inside its expanded subgraphs. */
static void level_edges(drawer *d, const level *l) {
    const sst_graph *g = l->cg->g;
    for (size_t i = 0; i < g->n_edges; i++) {
        level_edge(d, l, g->edges[i].from, g->edges[i].to, SOLID, NULL);
    }
    for (size_t i = 0; i < g->n_joins; i++) {
        level_join(d, l, i);
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        const sst__branch *br = &g->branches[i];
        for (size_t k = 0; k < sst__branch_count(g, br); k++) {
            const char *label;
            const char *to = sst__branch_at(g, br, k, &label);
            level_edge(d, l, br->from, to, DASHED, label);
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        for (size_t k = 0; k < g->nodes[i].n_ends; k++) {
            level_edge(d, l, g->nodes[i].name, g->nodes[i].ends[k], DOTTED, "goto");
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        level sub;
        if (sublevel(d, l, i, &sub)) {
            level_edges(d, &sub);
            sst__free(sub.own);
        }
    }
}

static void indent(drawer *d, unsigned depth) {
    for (unsigned k = 0; k <= depth; k++) {
        sst__buf_append(&d->b, d->dot ? "  " : "    ", d->dot ? 2 : 4);
    }
}

/* A node of an expanded subgraph: its full name as id, its own name as label. */
static void sub_node_decl(drawer *d, const level *l, const char *name, unsigned depth) {
    indent(d, depth);
    if (d->dot) {
        sst__buf_putc(&d->b, '"');
        dot_escaped(&d->b, l->prefix);
        dot_escaped(&d->b, name);
        sst__buf_append(&d->b, "\" [shape=box, label=", 20);
        dot_quoted(&d->b, name);
        sst__buf_append(&d->b, "];\n", 3);
        return;
    }
    mermaid_id(&d->b, l->prefix);
    mermaid_id(&d->b, name);
    sst__buf_append(&d->b, "(\"", 2);
    mermaid_label(&d->b, name);
    sst__buf_append(&d->b, "\")\n", 3);
}

/* Opens the Mermaid subgraph block / DOT cluster of subgraph node @p name of @p l. */
static void block_open(drawer *d, const level *l, const char *name, unsigned depth) {
    indent(d, depth);
    if (d->dot) {
        sst__buf_append(&d->b, "subgraph \"cluster_", 18);
        dot_escaped(&d->b, l->prefix);
        dot_escaped(&d->b, name);
        sst__buf_append(&d->b, "\" {\n", 4);
        indent(d, depth + 1);
        sst__buf_append(&d->b, "label=", 6);
        dot_quoted(&d->b, name);
        sst__buf_append(&d->b, ";\n", 2);
        return;
    }
    sst__buf_append(&d->b, "subgraph ", 9);
    mermaid_id(&d->b, l->prefix);
    mermaid_id(&d->b, name);
    sst__buf_append(&d->b, "[\"", 2);
    mermaid_label(&d->b, name);
    sst__buf_append(&d->b, "\"]\n", 3);
}

/* The nodes of @p l, each expanded subgraph in its own block. */
static void level_nodes(drawer *d, const level *l, unsigned depth) {
    const sst_graph *g = l->cg->g;
    for (size_t i = 0; i < g->n_nodes; i++) {
        level sub;
        if (sublevel(d, l, i, &sub)) {
            block_open(d, l, g->nodes[i].name, depth);
            level_nodes(d, &sub, depth + 1);
            indent(d, depth);
            sst__buf_append(&d->b, d->dot ? "}\n" : "end\n", d->dot ? 2 : 4);
            sst__free(sub.own);
        } else if (is_root(l)) {
            node_decl(d, g->nodes[i].name, "(");
        } else {
            sub_node_decl(d, l, g->nodes[i].name, depth);
        }
    }
}

static char *draw(const sst_compiled_graph *cg, bool dot, unsigned xray, sst_error *err) {
    if (cg == NULL) {
        sst__error(err, SST_EINVAL, "draw: NULL compiled graph");
        return NULL;
    }
    drawer d = {.dot = dot};
    sst__buf_init(&d.b);
    if (dot) {
        sst__buf_printf(&d.b, "digraph G {\n  rankdir=TB;\n");
    } else {
        sst__buf_printf(&d.b, "%%%%{init: {'flowchart': {'curve': 'linear'}}}%%%%\ngraph TD;\n");
    }
    level root = {cg, "", NULL, xray};
    node_decl(&d, SST_START, "([");
    level_nodes(&d, &root, 0);
    node_decl(&d, SST_END, "([");
    level_edges(&d, &root);
    if (dot) {
        sst__buf_append(&d.b, "}\n", 2);
    }
    char *out = sst__buf_detach(&d.b, NULL);
    if (out == NULL) {
        sst__enomem(err);
    }
    return out;
}

char *sst_compiled_graph_mermaid(const sst_compiled_graph *cg, sst_error *err) {
    return draw(cg, false, 0, err);
}

char *sst_compiled_graph_dot(const sst_compiled_graph *cg, sst_error *err) {
    return draw(cg, true, 0, err);
}

char *sst_compiled_graph_mermaid_xray(const sst_compiled_graph *cg, unsigned xray, sst_error *err) {
    return draw(cg, false, xray, err);
}

char *sst_compiled_graph_dot_xray(const sst_compiled_graph *cg, unsigned xray, sst_error *err) {
    return draw(cg, true, xray, err);
}
