/* SPDX-License-Identifier: MIT */
/*
 * Assistants (LangGraph's: a graph with its own config, context and
 * metadata, versioned). They are items of the server's store under the
 * reserved namespace ("superstep_server", "assistants"), keyed by id, and
 * each version under ("superstep_server", "assistant_versions", id); the
 * store API hides that namespace. Each graph has a default assistant whose
 * id is uuid5(SRV_ASSISTANT_NS, graph_id), and a graph id is accepted
 * wherever an assistant id is, as LangGraph's server does.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "server_int.h"
#include "superstep/id.h"

static const char *const k_ns[] = {SRV_RESERVED_NS, "assistants"};

/* The versions namespace of @p id. */
static void versions_ns(const char *id, const char *out[3]) {
    out[0] = SRV_RESERVED_NS;
    out[1] = "assistant_versions";
    out[2] = id;
}

/* The stored assistant @p id (a UUID), or NULL (SST_ENOTFOUND). */
static sst_value *load(sst_server *s, const char *id, sst_error *err) {
    bool missing = false;
    sst_value *v = srv_hidden_get(s, k_ns[1], id, &missing, err);
    if (missing) {
        sst__error(err, SST_ENOTFOUND, "Assistant '%s' not found", id);
    }
    return v;
}

/* Stores @p a (borrowed) as current and as its version. */
static sst_code save(sst_server *s, const sst_value *a, sst_error *err) {
    const char *id = sst_string_cstr(sst_object_get(a, "assistant_id"));
    char ver[32];
    snprintf(ver, sizeof ver, "%lld", (long long)sst_int_value(sst_object_get(a, "version")));
    const char *vns[3];
    versions_ns(id, vns);
    sst_code rc = sst_store_put(s->store, vns, 3, ver, a, NULL, err);
    return rc == SST_OK ? sst_store_put(s->store, k_ns, 2, id, a, NULL, err) : rc;
}

sst_value *srv_assistant_lookup(sst_server *s, const char *id, sst_error *err) {
    srv_graph *g = srv_graph_find(s, id);
    if (g != NULL) {
        return load(s, g->assistant_id, err);
    }
    if (!srv_is_uuid(id)) {
        sst__error(err, SST_ENOTFOUND,
                   "No assistant found for \"%.200s\". Make sure the assistant ID is for a valid "
                   "assistant or a valid graph ID.",
                   id);
        return NULL;
    }
    return load(s, id, err);
}

/* A new assistant value (version 1 unless @p version). */
static sst_value *make(const char *id, const char *graph_id, const char *name,
                       const char *description, const sst_value *config, const sst_value *context,
                       const sst_value *metadata, int64_t version, const sst_value *created,
                       sst_error *err) {
    sst_value *now = srv_iso_time(srv_now(), err);
    sst_value *a = sst__set_take(sst_object_empty(), "assistant_id", sst_string_new(id, err), err);
    a = sst__set_take(a, "graph_id", sst_string_new(graph_id, err), err);
    a = sst__set_take(a, "config", sst_value_ref(config != NULL ? config : sst_object_empty()),
                      err);
    a = sst__set_take(a, "context", sst_value_ref(context != NULL ? context : sst_object_empty()),
                      err);
    a = sst__set_take(a, "created_at",
                      created != NULL ? sst_value_ref(created) : sst_value_ref(now), err);
    a = sst__set_take(a, "updated_at", now, err);
    a = sst__set_take(a, "metadata",
                      sst_value_ref(metadata != NULL ? metadata : sst_object_empty()), err);
    a = sst__set_take(a, "version", sst_int_new(version, err), err);
    a = sst__set_take(a, "name", sst_string_new(name != NULL ? name : graph_id, err), err);
    return sst__set_take(a, "description",
                         description != NULL ? sst_string_new(description, err) : sst_null(), err);
}

sst_code srv_assistants_init(sst_server *s, sst_error *err) {
    for (size_t i = 0; i < s->n_graphs; i++) {
        srv_graph *g = &s->graphs[i];
        sst_error e = {0};
        sst_value *a = load(s, g->assistant_id, &e);
        if (a != NULL || e.code != SST_ENOTFOUND) {
            sst_value_unref(a);
            if (a == NULL) {
                *err = e;
                return e.code;
            }
            continue;
        }
        sst_value *meta =
            sst__set_take(sst_object_empty(), "created_by", sst_string_new("system", err), err);
        a = make(g->assistant_id, g->id, g->id, NULL, NULL, NULL, meta, 1, NULL, err);
        sst_value_unref(meta);
        sst_code rc = a != NULL ? save(s, a, err) : sst__code(err);
        sst_value_unref(a);
        if (rc != SST_OK) {
            return rc;
        }
    }
    return SST_OK;
}

void srv_assistant_get(srv_request *r, srv_response *res) {
    sst_error err = {0};
    sst_value *a = srv_assistant_lookup(r->s, r->param[0], &err);
    srv_answer(res, a, &err);
}

void srv_assistants_create(srv_request *r, srv_response *res) {
    static const char *const known[] = {"assistant_id", "graph_id",    "config",
                                        "context",      "metadata",    "if_exists",
                                        "name",         "description", NULL};
    static const char *const if_exists[] = {"raise", "do_nothing", NULL};
    const char *id = NULL, *graph_id = NULL, *name = NULL, *desc = NULL, *mode = "raise";
    const sst_value *config = NULL, *context = NULL, *meta = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "assistant_id", &id) ||
        !srv_field_string(r, res, "graph_id", &graph_id) ||
        !srv_field_object(r, res, "config", &config) ||
        !srv_check_value(&srv_config_shape, "config", config, res) ||
        !srv_field_object(r, res, "context", &context) ||
        !srv_field_object(r, res, "metadata", &meta) ||
        !srv_field_enum(r, res, "if_exists", if_exists, &mode) ||
        !srv_field_string(r, res, "name", &name) ||
        !srv_field_string(r, res, "description", &desc)) {
        return;
    }
    if (graph_id == NULL) {
        srv_error(res, 400, "body member 'graph_id' is required");
        return;
    }
    if (srv_graph_find(r->s, graph_id) == NULL) {
        srv_error(res, 404, "graph '%.200s' not found", graph_id);
        return;
    }
    char fresh[37];
    if (id == NULL) {
        sst_error e = {0};
        if (sst_uuid4(fresh, &e) != SST_OK) {
            srv_fail(res, &e);
            return;
        }
        id = fresh;
    } else if (!srv_is_uuid(id)) {
        srv_error(res, 400, "assistant_id '%.200s' is not a UUID", id);
        return;
    }
    sst_error err = {0};
    sst_value *old = load(r->s, id, &err);
    if (old != NULL) {
        if (strcmp(mode, "raise") == 0) {
            sst_value_unref(old);
            srv_error(res, 409, "Assistant '%s' already exists", id);
            return;
        }
        srv_json(res, 200, old);
        return;
    }
    if (err.code != SST_ENOTFOUND) {
        srv_fail(res, &err);
        return;
    }
    err = (sst_error){0};
    sst_value *a = make(id, graph_id, name, desc, config, context, meta, 1, NULL, &err);
    if (a == NULL || save(r->s, a, &err) != SST_OK) {
        sst_value_unref(a);
        srv_fail(res, &err);
        return;
    }
    srv_json(res, 200, a);
}

/* The highest version stored for @p id. */
static int64_t latest_version(sst_server *s, const char *id, sst_error *err) {
    const char *vns[3];
    versions_ns(id, vns);
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = vns;
    q.prefix_len = 3;
    q.limit = 100000;
    sst_value *all = sst_store_search(s->store, &q, err);
    int64_t max = 0;
    for (size_t i = 0; all != NULL && i < sst_array_len(all); i++) {
        int64_t v =
            strtoll(sst_string_cstr(sst_object_get(sst_array_get(all, i), "key")), NULL, 10);
        max = v > max ? v : max;
    }
    sst_value_unref(all);
    return max;
}

void srv_assistant_patch(srv_request *r, srv_response *res) {
    static const char *const known[] = {"graph_id", "config",      "context", "metadata",
                                        "name",     "description", NULL};
    const char *graph_id = NULL, *name = NULL, *desc = NULL;
    const sst_value *config = NULL, *context = NULL, *meta = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "graph_id", &graph_id) ||
        !srv_field_object(r, res, "config", &config) ||
        !srv_check_value(&srv_config_shape, "config", config, res) ||
        !srv_field_object(r, res, "context", &context) ||
        !srv_field_object(r, res, "metadata", &meta) || !srv_field_string(r, res, "name", &name) ||
        !srv_field_string(r, res, "description", &desc)) {
        return;
    }
    if (graph_id != NULL && srv_graph_find(r->s, graph_id) == NULL) {
        srv_error(res, 404, "graph '%.200s' not found", graph_id);
        return;
    }
    sst_error err = {0};
    sst_value *old = srv_assistant_lookup(r->s, r->param[0], &err);
    if (old == NULL) {
        srv_fail(res, &err);
        return;
    }
    const char *id = sst_string_cstr(sst_object_get(old, "assistant_id"));
    sst_value *merged = srv_merged(sst_object_get(old, "metadata"), meta, &err);
    const sst_value *desc_old = sst_object_get(old, "description");
    int64_t version = latest_version(r->s, id, &err) + 1;
    sst_value *a =
        make(id, graph_id != NULL ? graph_id : sst_string_cstr(sst_object_get(old, "graph_id")),
             name != NULL ? name : sst_string_cstr(sst_object_get(old, "name")),
             desc != NULL ? desc : (sst_is_string(desc_old) ? sst_string_cstr(desc_old) : NULL),
             config != NULL ? config : sst_object_get(old, "config"),
             context != NULL ? context : sst_object_get(old, "context"), merged, version,
             sst_object_get(old, "created_at"), &err);
    sst_value_unref(merged);
    sst_value_unref(old);
    if (a == NULL || save(r->s, a, &err) != SST_OK) {
        sst_value_unref(a);
        srv_fail(res, &err);
        return;
    }
    srv_json(res, 200, a);
}

void srv_assistant_delete(srv_request *r, srv_response *res) {
    sst_error err = {0};
    sst_value *a = srv_assistant_lookup(r->s, r->param[0], &err);
    if (a == NULL) {
        srv_fail(res, &err);
        return;
    }
    const char *id = sst_string_cstr(sst_object_get(a, "assistant_id"));
    int64_t last = latest_version(r->s, id, &err);
    const char *vns[3];
    versions_ns(id, vns);
    sst_code rc = SST_OK;
    for (int64_t v = 1; v <= last && rc == SST_OK; v++) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)v);
        rc = sst_store_delete(r->s->store, vns, 3, key, &err);
    }
    if (rc == SST_OK) {
        rc = sst_store_delete(r->s->store, k_ns, 2, id, &err);
    }
    sst_value_unref(a);
    if (rc != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    srv_no_content(res);
}

/* Every member of @p want equals @p have's (both objects). */
static bool contains(const sst_value *have, const sst_value *want) {
    for (size_t i = 0; want != NULL && i < sst_object_len(want); i++) {
        const sst_value *h = sst_object_get(have, sst_string_cstr(sst_object_key_at(want, i)));
        if (h == NULL || !sst_value_equal(h, sst_object_value_at(want, i))) {
            return false;
        }
    }
    return true;
}

/* The assistants matching the body's graph_id, name and metadata, newest first. */
static sst_value *matching(srv_request *r, srv_response *res) {
    static const char *const known[] = {"graph_id", "metadata",   "name",   "limit", "offset",
                                        "sort_by",  "sort_order", "select", NULL};
    const char *graph_id = NULL, *name = NULL;
    const sst_value *meta = NULL;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_string(r, res, "graph_id", &graph_id) ||
        !srv_field_string(r, res, "name", &name) || !srv_field_object(r, res, "metadata", &meta)) {
        return NULL;
    }
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = k_ns;
    q.prefix_len = 2;
    q.limit = 100000;
    sst_error err = {0};
    sst_value *items = sst_store_search(r->s->store, &q, &err);
    if (items == NULL) {
        srv_fail(res, &err);
        return NULL;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(items) && out != NULL; i++) {
        const sst_value *a = sst_object_get(sst_array_get(items, i), "value");
        const char *g = sst_string_cstr(sst_object_get(a, "graph_id"));
        const char *n = sst_string_cstr(sst_object_get(a, "name"));
        if ((graph_id == NULL || (g != NULL && strcmp(g, graph_id) == 0)) &&
            (name == NULL || (n != NULL && strstr(n, name) != NULL)) &&
            contains(sst_object_get(a, "metadata"), meta) &&
            srv_auth_sees(r, sst_object_get(a, "metadata"))) { /* users (auth.c) */
            out = sst__push_take(out, sst_value_ref(a), &err);
        }
    }
    sst_value_unref(items);
    return out;
}

sst_value *srv_assistants_all(sst_server *s, sst_error *err) {
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = k_ns;
    q.prefix_len = 2;
    q.limit = 100000;
    sst_value *items = sst_store_search(s->store, &q, err);
    if (items == NULL) {
        return NULL;
    }
    sst_value *out = sst_array_empty();
    for (size_t i = 0; i < sst_array_len(items) && out != NULL; i++) {
        out = sst__push_take(out, sst_value_ref(sst_object_get(sst_array_get(items, i), "value")),
                             err);
    }
    sst_value_unref(items);
    return out;
}

void srv_assistants_search(srv_request *r, srv_response *res) {
    sst_value *all = matching(r, res);
    if (all == NULL) {
        return;
    }
    int64_t limit = 10, offset = 0;
    if (!srv_field_int(r, res, "limit", 1, 10000, &limit) ||
        !srv_field_int(r, res, "offset", 0, INT32_MAX, &offset)) {
        sst_value_unref(all);
        return;
    }
    sst_error err = {0};
    sst_value *page = sst_array_empty();
    for (size_t i = (size_t)offset; i < sst_array_len(all) && i < (size_t)(offset + limit); i++) {
        page = sst__push_take(page, sst_value_ref(sst_array_get(all, i)), &err);
    }
    sst_value_unref(all);
    srv_json(res, page != NULL ? 200 : 500, page);
}

void srv_assistants_count(srv_request *r, srv_response *res) {
    sst_value *all = matching(r, res);
    if (all != NULL) {
        sst_error err = {0};
        srv_json(res, 200, sst_int_new((int64_t)sst_array_len(all), &err));
        sst_value_unref(all);
    }
}

void srv_assistant_versions(srv_request *r, srv_response *res) {
    static const char *const known[] = {"metadata", "limit", "offset", NULL};
    const sst_value *meta = NULL;
    int64_t limit = 10, offset = 0;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_object(r, res, "metadata", &meta) ||
        !srv_field_int(r, res, "limit", 1, 10000, &limit) ||
        !srv_field_int(r, res, "offset", 0, INT32_MAX, &offset)) {
        return;
    }
    sst_error err = {0};
    sst_value *a = srv_assistant_lookup(r->s, r->param[0], &err);
    if (a == NULL) {
        srv_fail(res, &err);
        return;
    }
    const char *id = sst_string_cstr(sst_object_get(a, "assistant_id"));
    const char *vns[3];
    versions_ns(id, vns);
    sst_value *out = sst_array_empty();
    size_t seen = 0;
    for (int64_t v = latest_version(r->s, id, &err); v >= 1 && out != NULL; v--) {
        char key[32];
        snprintf(key, sizeof key, "%lld", (long long)v);
        sst_value *item = sst_store_get(r->s->store, vns, 3, key, 0, &err);
        const sst_value *val = item != NULL ? sst_object_get(item, "value") : NULL;
        if (val != NULL && contains(sst_object_get(val, "metadata"), meta) &&
            seen++ >= (size_t)offset && sst_array_len(out) < (size_t)limit) {
            out = sst__push_take(out, sst_value_ref(val), &err);
        }
        sst_value_unref(item);
    }
    sst_value_unref(a);
    srv_json(res, out != NULL ? 200 : 500, out);
}

void srv_assistant_latest(srv_request *r, srv_response *res) {
    static const char *const known[] = {"version", NULL};
    int64_t version = 0;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_field_int(r, res, "version", 1, INT32_MAX, &version)) {
        return;
    }
    if (version == 0) {
        srv_error(res, 400, "body member 'version' is required");
        return;
    }
    sst_error err = {0};
    sst_value *a = srv_assistant_lookup(r->s, r->param[0], &err);
    if (a == NULL) {
        srv_fail(res, &err);
        return;
    }
    const char *vns[3];
    versions_ns(sst_string_cstr(sst_object_get(a, "assistant_id")), vns);
    char key[32];
    snprintf(key, sizeof key, "%lld", (long long)version);
    sst_value *item = sst_store_get(r->s->store, vns, 3, key, 0, &err);
    if (item == NULL || sst_is_null(item)) {
        sst_value_unref(item);
        sst_value_unref(a);
        srv_error(res, 404, "assistant version %lld not found", (long long)version);
        return;
    }
    sst_code rc =
        sst_store_put(r->s->store, k_ns, 2, vns[2], sst_object_get(item, "value"), NULL, &err);
    sst_value *v = sst_value_ref(sst_object_get(item, "value"));
    sst_value_unref(item);
    sst_value_unref(a);
    if (rc != SST_OK) {
        sst_value_unref(v);
        srv_fail(res, &err);
        return;
    }
    srv_json(res, 200, v);
}

/* The graph of the assistant the path names, with its reader locked; NULL after 404. */
static srv_graph *graph_of(srv_request *r, srv_response *res) {
    sst_error err = {0};
    sst_value *a = srv_assistant_lookup(r->s, r->param[0], &err);
    if (a == NULL) {
        srv_fail(res, &err);
        return NULL;
    }
    srv_graph *g = srv_graph_find(r->s, sst_string_cstr(sst_object_get(a, "graph_id")));
    sst_value_unref(a);
    if (g == NULL) {
        srv_error(res, 404, "the assistant's graph is not served here");
    }
    return g;
}

/* The ?xray= of a graph request: "true" every level, N that many, else 0. */
static unsigned xray_of(const srv_request *r) {
    const char *x = srv_query(r, "xray");
    if (x == NULL || strcmp(x, "false") == 0 || strcmp(x, "0") == 0) {
        return 0;
    }
    char *end;
    unsigned long n = strtoul(x, &end, 10);
    return strcmp(x, "true") == 0 ? SST_XRAY_ALL : (*end == '\0' && n < 100 ? (unsigned)n : 0);
}

/* True for START or END, of the graph or of a subgraph drawn expanded ("child:__end__"). */
static bool start_or_end(const char *id) {
    const char *c = strrchr(id, ':');
    const char *last = c != NULL ? c + 1 : id;
    return strcmp(last, SST_START) == 0 || strcmp(last, SST_END) == 0;
}

/*
 * The graph (taken) as LangGraph's server answers it, which differs from
 * Graph.to_json() (sst_compiled_graph_json): START and END are "schema" nodes,
 * every edge says whether it is conditional. NULL with err.
 */
static sst_value *served_graph(sst_value *g, sst_error *err) {
    if (g == NULL) {
        return NULL;
    }
    sst_value *nodes = sst_value_ref(sst_object_get(g, "nodes"));
    for (size_t i = 0; nodes != NULL && i < sst_array_len(nodes); i++) {
        const sst_value *n = sst_array_get(nodes, i);
        if (!start_or_end(sst_string_cstr(sst_object_get(n, "id")))) {
            continue;
        }
        sst_value *data = sst_object_set_take(
            sst_object_empty(), "$schema",
            sst_string_new("https://json-schema.org/draft/2020-12/schema", err), err);
        sst_value *o =
            sst_object_set_take(sst_value_ref(n), "type", sst_string_new("schema", err), err);
        o = sst_object_set_take(o, "data", data, err);
        nodes = sst_array_set_take(nodes, i, o, err);
    }
    sst_value *edges = sst_value_ref(sst_object_get(g, "edges"));
    for (size_t i = 0; edges != NULL && i < sst_array_len(edges); i++) {
        const sst_value *e = sst_array_get(edges, i);
        if (sst_object_get(e, "conditional") == NULL) {
            edges = sst_array_set_take(
                edges, i,
                sst_object_set_take(sst_value_ref(e), "conditional", sst_bool(false), err), err);
        }
    }
    g = sst_object_set_take(g, "nodes", nodes, err);
    return sst_object_set_take(g, "edges", edges, err);
}

void srv_assistant_graph(srv_request *r, srv_response *res) {
    srv_graph *g = graph_of(r, res);
    if (g == NULL) {
        return;
    }
    sst_error err = {0};
    pthread_mutex_lock(&g->mu);
    sst_value *v = served_graph(sst_compiled_graph_json(g->graph, xray_of(r), &err), &err);
    pthread_mutex_unlock(&g->mu);
    srv_answer(res, v, &err);
}

/*
 * The drawing of @p g at @p xray (g->mu held): from the graph's cache, else laid out
 * and kept there (a few levels; more are laid out every time). Graphviz 2.42's dot
 * layout loses a little memory on every graph with clusters (subgraphs drawn with
 * xray), so a drawing is laid out once. @return a new copy; NULL with err.
 */
static char *drawing(srv_graph *g, unsigned xray, size_t *len, sst_error *err) {
    for (size_t k = 0; k < g->n_svg; k++) {
        if (g->svg[k].xray == xray) {
            *len = g->svg[k].len;
            char *copy = sst__strndup(g->svg[k].svg, g->svg[k].len);
            if (copy == NULL) {
                sst__enomem(err);
            }
            return copy;
        }
    }
    char *dot = sst_compiled_graph_dot_xray(g->graph, xray, err);
    char *svg = dot != NULL ? sst_dot_to_svg(dot, len, err) : NULL;
    sst_free(dot);
    if (svg == NULL || g->n_svg == sizeof g->svg / sizeof g->svg[0]) {
        return svg;
    }
    char *kept = sst__strndup(svg, *len);
    if (kept != NULL) {
        g->svg[g->n_svg].xray = xray;
        g->svg[g->n_svg].svg = kept;
        g->svg[g->n_svg].len = *len;
        g->n_svg++;
    }
    return svg;
}

/* GET /assistants/{id}/graph.svg (superstep's own): the graph laid out by Graphviz. */
void srv_assistant_graph_svg(srv_request *r, srv_response *res) {
    srv_graph *g = graph_of(r, res);
    if (g == NULL) {
        return;
    }
    sst_error err = {0};
    size_t len = 0;
    pthread_mutex_lock(&g->mu);
    char *svg = drawing(g, xray_of(r), &len, &err);
    pthread_mutex_unlock(&g->mu);
    if (svg == NULL) {
        srv_fail(res, &err);
        return;
    }
    res->text = svg;
    res->text_len = len;
    res->type = "image/svg+xml";
}

/* {"type": @p type} (new). */
static sst_value *typed(const char *type, sst_error *err) {
    return sst__set_take(sst_object_empty(), "type", sst_string_new(type, err), err);
}

/* The JSON Schema type of a value (for a default, or an element of one), or NULL. */
static const char *json_type(const sst_value *v) {
    switch (sst_value_type(v)) {
        case SST_TYPE_NULL:
            return "null";
        case SST_TYPE_BOOL:
            return "boolean";
        case SST_TYPE_INT:
            return "integer";
        case SST_TYPE_DOUBLE:
            return "number";
        case SST_TYPE_STRING:
            return "string";
        case SST_TYPE_ARRAY:
            return "array";
        case SST_TYPE_OBJECT:
            return "object";
        default:
            return NULL;
    }
}

/* A LangChain message as JSON Schema: the members a form or a chat view reads. */
static sst_value *message_schema(sst_error *err) {
    sst_value *props = sst_object_empty();
    props = sst__set_take(props, "type", typed("string", err), err);
    props = sst__set_take(props, "role", typed("string", err), err);
    props = sst__set_take(props, "content", sst_object_empty(), err);
    props = sst__set_take(props, "id", typed("string", err), err);
    props = sst__set_take(props, "name", typed("string", err), err);
    props = sst__set_take(props, "tool_calls", typed("array", err), err);
    props = sst__set_take(props, "tool_call_id", typed("string", err), err);
    sst_value *m = typed("object", err);
    m = sst__set_take(m, "properties", props, err);
    return sst__set_take(
        m, "required", sst__push_take(sst_array_empty(), sst_string_new("content", err), err), err);
}

/*
 * The JSON Schema of state field @p name: what its reducer and its default say (a default
 * also as "default", a reducer other than replace named in "description"). add_messages: a list of
 * messages marked "langgraph_type": "messages" (what LangGraph's schemas and Studio's chat view key
 * on); sum: a number (an integer when its default is one); append and unique lists: an array (of
 * the default's element type); merge and deep_merge: an object; replace: the default's type, else
 * any.
 */
static sst_value *field_schema(const sst_schema *schema, const sst_value *defaults,
                               const char *name, sst_error *err) {
    const char *reducer = sst_reducer_name(sst_schema_field_reducer(schema, name));
    const sst_value *def = sst_object_get(defaults, name);
    sst_value *f = NULL;
    if (reducer != NULL && strcmp(reducer, "add_messages") == 0) {
        f = typed("array", err);
        f = sst__set_take(f, "items", message_schema(err), err);
        f = sst__set_take(f, "langgraph_type", sst_string_new("messages", err), err);
    } else if (reducer != NULL && strcmp(reducer, "sum") == 0) {
        f = typed(def != NULL && sst_is_int(def) ? "integer" : "number", err);
    } else if (reducer != NULL && strcmp(reducer, "append") == 0) {
        f = typed("array", err);
        const char *item = sst_array_len(def) > 0 ? json_type(sst_array_get(def, 0)) : NULL;
        if (item != NULL) {
            f = sst__set_take(f, "items", typed(item, err), err);
        }
    } else if (reducer != NULL &&
               (strcmp(reducer, "merge") == 0 || strcmp(reducer, "deep_merge") == 0)) {
        f = typed("object", err);
    } else if (def != NULL && json_type(def) != NULL && !sst_is_null(def)) {
        f = typed(json_type(def), err);
    } else {
        f = sst_object_empty(); /* any JSON value */
    }
    f = sst__set_take(f, "title", sst_string_new(name, err), err);
    /* replace and unique (LangGraph's LastValue, a Python graph's plain field) are what a
     * field without a reducer does: LangGraph's schemas describe neither. */
    if (reducer != NULL && strcmp(reducer, "replace") != 0 && strcmp(reducer, "unique") != 0) {
        char what[96];
        snprintf(what, sizeof what, "Reducer: %s", reducer);
        f = sst__set_take(f, "description", sst_string_new(what, err), err);
    }
    if (def != NULL) {
        f = sst__set_take(f, "default", sst_value_ref(def), err);
    }
    return f;
}

/* {"type": "object", "properties": {field: its schema}, "$schema": ...} of @p fields
 * (names) of @p schema (NULL: any value each). */
static sst_value *object_schema(const sst_value *fields, const sst_schema *schema,
                                const sst_value *defaults, sst_error *err) {
    sst_value *props = sst_object_empty();
    for (size_t i = 0; i < sst_array_len(fields); i++) {
        const sst_value *name = sst_array_get(fields, i);
        props = sst__setv_take(props, name,
                               schema != NULL
                                   ? field_schema(schema, defaults, sst_string_cstr(name), err)
                                   : sst_object_empty(),
                               err);
    }
    sst_value *o = typed("object", err);
    o = sst__set_take(o, "properties", props, err);
    return sst__set_take(o, "$schema",
                         sst_string_new("http://json-schema.org/draft-07/schema#", err), err);
}

/*
 * The schemas of @p cg as GET /assistants/{id}/schemas answers them: {graph_id (@p graph_id),
 * input_schema, output_schema, state_schema, config_schema, context_schema}. The caller
 * holds the lock of the graph @p cg belongs to. @return new object; NULL (err set).
 */
static sst_value *graph_schemas(const char *graph_id, const sst_compiled_graph *cg,
                                sst_error *err) {
    sst_value *fields = sst_compiled_graph_state_fields(cg, err);
    if (fields == NULL) {
        return NULL;
    }
    const sst_schema *schema = sst_compiled_graph_schema(cg);
    sst_value *defaults = sst_schema_initial_state(schema, err);
    const sst_value *inf = sst_compiled_graph_input_fields(cg);
    const sst_value *outf = sst_compiled_graph_output_fields(cg);
    sst_value *in = object_schema(inf != NULL ? inf : fields, schema, defaults, err);
    sst_value *out = object_schema(outf != NULL ? outf : fields, schema, defaults, err);
    sst_value *state = object_schema(fields, schema, defaults, err);
    sst_value_unref(fields);
    sst_value_unref(defaults);
    sst_value *any = object_schema(sst_array_empty(), NULL, NULL, err);
    sst_value *v =
        sst__set_take(sst_object_empty(), "graph_id", sst_string_new(graph_id, err), err);
    v = sst__set_take(v, "input_schema", in, err);
    v = sst__set_take(v, "output_schema", out, err);
    v = sst__set_take(v, "state_schema", state, err);
    v = sst__set_take(v, "config_schema", sst_value_ref(any), err);
    return sst__set_take(v, "context_schema", any, err);
}

sst_value *srv_graph_input_schema(srv_graph *g, sst_error *err) {
    pthread_mutex_lock(&g->mu);
    sst_value *v = graph_schemas(g->id, sst_lua_script_graph(g->reader), err);
    pthread_mutex_unlock(&g->mu);
    sst_value *in = v != NULL ? sst_value_ref(sst_object_get(v, "input_schema")) : NULL;
    sst_value_unref(v);
    return in;
}

void srv_assistant_schemas(srv_request *r, srv_response *res) {
    srv_graph *g = graph_of(r, res);
    if (g == NULL) {
        return;
    }
    sst_error err = {0};
    pthread_mutex_lock(&g->mu);
    sst_value *v = graph_schemas(g->id, g->graph, &err);
    pthread_mutex_unlock(&g->mu);
    srv_answer(res, v, &err);
}

/*
 * Adds to *out the subgraphs of @p cg as LangGraph's Pregel.getSubgraphs(namespace, recurse)
 * yields them, each keyed by @p prefix ("" at the root) joined with "|" to its node's name:
 * (a) with @p ns NULL, every subgraph node in the order the nodes were added and, with
 *     @p recurse, right after each one its own subgraphs in turn ("node|child|...");
 * (b) with @p ns, only the subgraph it names: a node's name, or with @p recurse a path
 *     "node|child|..." through nested subgraph nodes; nothing when there is none.
 * On failure *out becomes NULL (err set) and the walk stops.
 * @return true when @p ns was found (the caller stops looking too).
 */
static bool add_subgraphs(const char *graph_id, const sst_compiled_graph *cg, const char *prefix,
                          const char *ns, bool recurse, sst_value **out, sst_error *err) {
    const char *name = NULL;
    const sst_compiled_graph *sub;
    for (size_t i = 0; *out != NULL && (sub = sst_compiled_graph_subgraph_at(cg, i, &name)) != NULL;
         i++) {
        size_t len = strlen(name);
        bool exact = ns != NULL && strcmp(ns, name) == 0;
        if (ns != NULL && !exact && (strncmp(ns, name, len) != 0 || ns[len] != '|')) {
            continue;
        }
        sst__buf b;
        sst__buf_init(&b);
        sst__buf_printf(&b, "%s%s%s", prefix, prefix[0] != '\0' ? "|" : "", name);
        char *path = sst__buf_detach(&b, NULL);
        if (path == NULL) {
            sst_value_unref(*out);
            *out = NULL;
            sst__error(err, SST_ENOMEM, "subgraph namespace '%s|%s': out of memory", prefix, name);
            return false;
        }
        if (ns == NULL || exact) {
            *out = sst__set_take(*out, path, graph_schemas(graph_id, sub, err), err);
        }
        bool found = exact;
        if (!exact && recurse) {
            found = add_subgraphs(graph_id, sub, path, ns != NULL ? ns + len + 1 : NULL, recurse,
                                  out, err);
        }
        sst__free(path);
        if (found) {
            return true;
        }
    }
    return false;
}

/* LangGraph.js's coercedBoolean: "true", "1" or "yes" in any case; anything else is false. */
static bool query_true(const char *v) {
    static const char *const yes[] = {"true", "1", "yes"};
    for (size_t i = 0; v != NULL && i < sizeof yes / sizeof yes[0]; i++) {
        size_t k = 0;
        while (yes[i][k] != '\0' && tolower((unsigned char)v[k]) == yes[i][k]) {
            k++;
        }
        if (yes[i][k] == '\0' && v[k] == '\0') {
            return true;
        }
    }
    return false;
}

/* GET /assistants/{id}/subgraphs[/{namespace}] (?recurse), as LangGraph's getSubgraphs. */
void srv_assistant_subgraphs(srv_request *r, srv_response *res) {
    srv_graph *g = graph_of(r, res);
    if (g == NULL) {
        return;
    }
    const char *ns = r->n_param > 1 ? r->param[1] : NULL;
    bool recurse = query_true(srv_query(r, "recurse"));
    sst_error err = {0};
    sst_value *v = sst_object_empty();
    pthread_mutex_lock(&g->mu);
    (void)add_subgraphs(g->id, g->graph, "", ns, recurse, &v, &err);
    pthread_mutex_unlock(&g->mu);
    srv_answer(res, v, &err);
}
