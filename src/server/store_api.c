/* SPDX-License-Identifier: MIT */
/*
 * The store routes (LangGraph's /store/items and /store/namespaces) on the
 * server's long-term store. The namespace SRV_RESERVED_NS holds the
 * server's own items (assistants): refused for writes and hidden from
 * reads.
 */
#include <string.h>

#include "server_int.h"

enum { MAX_LABELS = 32 };

/* The labels of a namespace given as a list of strings; false after a 400. */
static bool labels_of(srv_response *res, const char *key, const sst_value *v,
                      const char *out[MAX_LABELS], size_t *n) {
    *n = 0;
    if (v == NULL || sst_is_null(v)) {
        return true;
    }
    if (!sst_is_array(v) || sst_array_len(v) > MAX_LABELS) {
        srv_error(res, 400, "body member '%s' must be a list of at most %d strings", key,
                  MAX_LABELS);
        return false;
    }
    for (size_t i = 0; i < sst_array_len(v); i++) {
        if (!sst_is_string(sst_array_get(v, i))) {
            srv_error(res, 400, "body member '%s': label %zu is not a string", key, i);
            return false;
        }
        out[i] = sst_string_cstr(sst_array_get(v, i));
    }
    *n = sst_array_len(v);
    return true;
}

static bool reserved(srv_response *res, const char *const *ns, size_t n) {
    if (n > 0 && strcmp(ns[0], SRV_RESERVED_NS) == 0) {
        srv_error(res, 403, "the namespace '%s' is reserved for the server's own records",
                  SRV_RESERVED_NS);
        return true;
    }
    return false;
}

void srv_store_put(srv_request *r, srv_response *res) {
    static const char *const known[] = {"namespace", "key", "value", "index", "ttl", NULL};
    static const srv_member shapes[] = {{"index", SRV_SHAPE_FALSE_OR_STRINGS, NULL, NULL},
                                        {NULL, 0, NULL, NULL}};
    const char *key = NULL, *ns[MAX_LABELS];
    const sst_value *value = NULL;
    size_t n = 0;
    double ttl = 0;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !srv_check_members(shapes, NULL, r->json, res) ||
        !labels_of(res, "namespace", sst_object_get(r->json, "namespace"), ns, &n) ||
        !srv_field_string(r, res, "key", &key) || !srv_field_object(r, res, "value", &value) ||
        !srv_field_number(r, res, "ttl", 0, 1e12, &ttl) || reserved(res, ns, n)) {
        return;
    }
    if (key == NULL || value == NULL || n == 0) {
        srv_error(res, 400, "body members 'namespace', 'key' and 'value' are required");
        return;
    }
    sst_store_put_opts po;
    sst_store_put_opts_init(&po);
    po.ttl_minutes = ttl > 0 ? ttl : SST_STORE_TTL_DEFAULT;
    const sst_value *index = sst_object_get(r->json, "index");
    po.no_index = sst_is_bool(index) && !sst_bool_value(index);
    sst_error err = {0};
    if (sst_store_put(r->s->store, ns, n, key, value, &po, &err) != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    srv_no_content(res);
}

/* Splits the dotted namespace of a query into @p out (labels point into @p buf). */
static size_t split_ns(char *buf, const char *out[MAX_LABELS]) {
    size_t n = 0;
    for (char *p = buf; p != NULL && *p != '\0' && n < MAX_LABELS;) {
        out[n++] = p;
        p = strchr(p, '.');
        if (p != NULL) {
            *p++ = '\0';
        }
    }
    return n;
}

void srv_store_get(srv_request *r, srv_response *res) {
    const char *q = srv_query(r, "namespace"), *key = srv_query(r, "key");
    if (q == NULL || key == NULL) {
        srv_error(res, 400,
                  "query parameters 'namespace' (labels joined with '.') and 'key' "
                  "are required");
        return;
    }
    char buf[4096];
    size_t qlen = strlen(q);
    if (qlen >= sizeof buf) {
        srv_error(res, 400, "namespace too long");
        return;
    }
    memcpy(buf, q, qlen + 1);
    const char *ns[MAX_LABELS];
    size_t n = split_ns(buf, ns);
    if (reserved(res, ns, n)) {
        return;
    }
    const char *rt = srv_query(r, "refresh_ttl");
    int refresh = rt == NULL ? -1 : strcmp(rt, "true") == 0 || strcmp(rt, "1") == 0;
    sst_error err = {0};
    sst_value *item = sst_store_get(r->s->store, ns, n, key, refresh, &err);
    srv_answer(res, item, &err);
}

void srv_store_delete(srv_request *r, srv_response *res) {
    static const char *const known[] = {"namespace", "key", NULL};
    const char *key = NULL, *ns[MAX_LABELS];
    size_t n = 0;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !labels_of(res, "namespace", sst_object_get(r->json, "namespace"), ns, &n) ||
        !srv_field_string(r, res, "key", &key) || reserved(res, ns, n)) {
        return;
    }
    if (key == NULL || n == 0) {
        srv_error(res, 400, "body members 'namespace' and 'key' are required");
        return;
    }
    sst_error err = {0};
    if (sst_store_delete(r->s->store, ns, n, key, &err) != SST_OK) {
        srv_fail(res, &err);
        return;
    }
    srv_no_content(res);
}

/* Keeps the items (or namespaces) outside the reserved namespace. */
static sst_value *visible(sst_value *list, bool items, sst_error *err) {
    sst_value *out = sst_array_empty();
    for (size_t i = 0; list != NULL && i < sst_array_len(list) && out != NULL; i++) {
        const sst_value *v = sst_array_get(list, i);
        const sst_value *ns = items ? sst_object_get(v, "namespace") : v;
        const char *first = sst_string_cstr(sst_array_get(ns, 0));
        if (first == NULL || strcmp(first, SRV_RESERVED_NS) != 0) {
            out = sst__push_take(out, sst_value_ref(v), err);
        }
    }
    sst_value_unref(list);
    return out;
}

void srv_store_search(srv_request *r, srv_response *res) {
    static const char *const known[] = {"namespace_prefix", "filter", "limit", "offset", "query",
                                        "refresh_ttl",      NULL};
    const char *prefix[MAX_LABELS], *query = NULL;
    size_t n = 0;
    const sst_value *filter = NULL;
    int64_t limit = 10, offset = 0;
    bool refresh = false;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !labels_of(res, "namespace_prefix", sst_object_get(r->json, "namespace_prefix"), prefix,
                   &n) ||
        !srv_field_object(r, res, "filter", &filter) ||
        !srv_field_int(r, res, "limit", 1, 10000, &limit) ||
        !srv_field_int(r, res, "offset", 0, INT32_MAX, &offset) ||
        !srv_field_string(r, res, "query", &query) ||
        !srv_field_bool(r, res, "refresh_ttl", &refresh)) {
        return;
    }
    sst_store_search_opts q;
    sst_store_search_opts_init(&q);
    q.prefix = prefix;
    q.prefix_len = n;
    q.filter = filter;
    q.query = query;
    q.offset = (size_t)offset;
    q.limit = (size_t)limit;
    q.refresh_ttl = refresh ? 1 : -1;
    sst_error err = {0};
    sst_value *items = sst_store_search(r->s->store, &q, &err);
    if (items == NULL) {
        srv_fail(res, &err);
        return;
    }
    items = visible(items, true, &err);
    srv_json(res, 200, sst__set_take(sst_object_empty(), "items", items, &err));
}

void srv_store_namespaces(srv_request *r, srv_response *res) {
    static const char *const known[] = {"prefix", "suffix", "max_depth", "limit", "offset", NULL};
    const char *prefix[MAX_LABELS], *suffix[MAX_LABELS];
    size_t np = 0, ns = 0;
    int64_t depth = 0, limit = 100, offset = 0;
    if (!srv_body_object(r, res) || !srv_known_fields(r, res, known) ||
        !labels_of(res, "prefix", sst_object_get(r->json, "prefix"), prefix, &np) ||
        !labels_of(res, "suffix", sst_object_get(r->json, "suffix"), suffix, &ns) ||
        !srv_field_int(r, res, "max_depth", 1, 1000, &depth) ||
        !srv_field_int(r, res, "limit", 1, 10000, &limit) ||
        !srv_field_int(r, res, "offset", 0, INT32_MAX, &offset)) {
        return;
    }
    sst_store_list_opts q;
    sst_store_list_opts_init(&q);
    q.prefix = prefix;
    q.prefix_len = np;
    q.suffix = suffix;
    q.suffix_len = ns;
    q.max_depth = (size_t)depth;
    q.limit = (size_t)limit;
    q.offset = (size_t)offset;
    sst_error err = {0};
    sst_value *list = sst_store_list_namespaces(r->s->store, &q, &err);
    if (list == NULL) {
        srv_fail(res, &err);
        return;
    }
    list = visible(list, false, &err);
    srv_json(res, 200, sst__set_take(sst_object_empty(), "namespaces", list, &err));
}
