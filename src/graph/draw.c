/* SPDX-License-Identifier: MIT */
/*
 * Drawing a compiled graph as a Mermaid flowchart or a Graphviz digraph.
 * Static edges are solid, conditional edges dashed (labelled with the path
 * map key when there is one; a router without a path map may go to every
 * node), goto destinations dotted, and each join is one junction that its
 * sources point into.
 */
#include <string.h>

#include "graph_int.h"

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

static void dot_quoted(sst__buf *b, const char *s) {
    sst__buf_putc(b, '"');
    for (const char *p = s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            sst__buf_putc(b, '\\');
        }
        sst__buf_putc(b, *p);
    }
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

static char *draw(const sst_compiled_graph *cg, bool dot, size_t *len, sst_error *err) {
    if (cg == NULL) {
        sst__error(err, SST_EINVAL, "draw: NULL compiled graph");
        return NULL;
    }
    const sst_graph *g = cg->g;
    drawer d;
    sst__buf_init(&d.b);
    d.dot = dot;
    if (dot) {
        sst__buf_printf(&d.b, "digraph G {\n  rankdir=TB;\n");
    } else {
        sst__buf_printf(&d.b, "%%%%{init: {'flowchart': {'curve': 'linear'}}}%%%%\ngraph TD;\n");
    }
    node_decl(&d, SST_START, "([");
    for (size_t i = 0; i < g->n_nodes; i++) {
        node_decl(&d, g->nodes[i].name, "(");
    }
    node_decl(&d, SST_END, "([");
    for (size_t i = 0; i < g->n_edges; i++) {
        edge(&d, g->edges[i].from, g->edges[i].to, SOLID, NULL);
    }
    for (size_t i = 0; i < g->n_joins; i++) {
        const sst__join *j = &g->joins[i];
        if (dot) {
            sst__buf_printf(&d.b, "  \"join:%zu\" [shape=point, label=\"\"];\n", i);
            for (size_t k = 0; k < j->n; k++) {
                sst__buf_append(&d.b, "  ", 2);
                dot_quoted(&d.b, j->from[k]);
                sst__buf_printf(&d.b, " -> \"join:%zu\" [arrowhead=none];\n", i);
            }
            sst__buf_printf(&d.b, "  \"join:%zu\" -> ", i);
            dot_quoted(&d.b, j->to);
            sst__buf_append(&d.b, ";\n", 2);
        } else {
            /* Mermaid's own join syntax: a & b --> c. */
            sst__buf_append(&d.b, "    ", 4);
            for (size_t k = 0; k < j->n; k++) {
                if (k > 0) {
                    sst__buf_append(&d.b, " & ", 3);
                }
                mermaid_id(&d.b, j->from[k]);
            }
            sst__buf_append(&d.b, " --> ", 5);
            mermaid_id(&d.b, j->to);
            sst__buf_putc(&d.b, '\n');
        }
    }
    for (size_t i = 0; i < g->n_branches; i++) {
        const sst__branch *br = &g->branches[i];
        if (br->path_map == NULL) {
            for (size_t k = 0; k < g->n_nodes; k++) {
                edge(&d, br->from, g->nodes[k].name, DASHED, NULL);
            }
            edge(&d, br->from, SST_END, DASHED, NULL);
        } else if (sst_is_object(br->path_map)) {
            for (size_t k = 0; k < sst_object_len(br->path_map); k++) {
                const char *key = sst_string_cstr(sst_object_key_at(br->path_map, k));
                const char *to = sst_string_cstr(sst_object_value_at(br->path_map, k));
                edge(&d, br->from, to, DASHED, strcmp(key, to) == 0 ? NULL : key);
            }
        } else {
            for (size_t k = 0; k < sst_array_len(br->path_map); k++) {
                edge(&d, br->from, sst_string_cstr(sst_array_get(br->path_map, k)), DASHED, NULL);
            }
        }
    }
    for (size_t i = 0; i < g->n_nodes; i++) {
        for (size_t k = 0; k < g->nodes[i].n_ends; k++) {
            edge(&d, g->nodes[i].name, g->nodes[i].ends[k], DOTTED, "goto");
        }
    }
    if (dot) {
        sst__buf_append(&d.b, "}\n", 2);
    }
    char *out = sst__buf_detach(&d.b, len);
    if (out == NULL) {
        sst__enomem(err);
    }
    return out;
}

char *sst_compiled_graph_mermaid(const sst_compiled_graph *cg, sst_error *err) {
    return draw(cg, false, NULL, err);
}

char *sst_compiled_graph_dot(const sst_compiled_graph *cg, sst_error *err) {
    return draw(cg, true, NULL, err);
}
