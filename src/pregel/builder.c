/* SPDX-License-Identifier: MIT */
/* Building and freezing a vertex set; option defaults. */
#include <string.h>

#include "pregel_int.h"
#include "superstep/json.h"

void sst_vertex_opts_init(sst_vertex_opts *o) {
    o->config = NULL;
    /* No retry unless asked for (LangGraph's default): one attempt, the rest as the
     * default policy so that raising max_attempts alone gives RetryPolicy(max_attempts). */
    sst_retry_policy_init(&o->retry);
    o->retry.max_attempts = 1;
    o->combiner = NULL;
    o->combiner_user_data = NULL;
    o->defer = false;
    memset(&o->timeout, 0, sizeof o->timeout);
    o->error_vertex = NULL;
    memset(&o->cache, 0, sizeof o->cache);
}

sst_pregel_builder *sst_pregel_builder_new(const sst_schema *schema, sst_error *err) {
    if (schema == NULL) {
        sst__error(err, SST_EINVAL, "pregel: NULL schema");
        return NULL;
    }
    sst_pregel_builder *b = sst__calloc(1, sizeof *b);
    if (b == NULL) {
        sst__enomem(err);
        return NULL;
    }
    b->schema = schema;
    return b;
}

static void vertex_free(sst__vertex *v) {
    sst__free(v->name);
    sst__free(v->error_vertex);
    sst_value_unref(v->config);
}

void sst_pregel_builder_free(sst_pregel_builder *b) {
    if (b == NULL) {
        return;
    }
    for (size_t i = 0; i < b->n; i++) {
        vertex_free(&b->v[i]);
    }
    sst__free(b->v);
    sst__free(b);
}

sst_code sst_pregel_builder_add_vertex(sst_pregel_builder *b, const char *name, sst_compute_fn fn,
                                       void *user_data, const sst_vertex_opts *opts,
                                       sst_error *err) {
    if (b == NULL || name == NULL || fn == NULL) {
        return sst__error(err, SST_EINVAL, "pregel: add vertex: NULL %s",
                          b == NULL      ? "builder"
                          : name == NULL ? "name"
                                         : "compute function");
    }
    size_t len = strlen(name);
    if (len == 0 || len > SST__VERTEX_NAME_MAX) {
        return sst__error(err, SST_EINVAL, "pregel: vertex name must have 1 to %d bytes, got %zu",
                          SST__VERTEX_NAME_MAX, len);
    }
    if (!sst_utf8_valid(name, len)) {
        return sst__error(err, SST_EUTF8, "pregel: vertex name is not valid UTF-8");
    }
    for (size_t i = 0; i < b->n; i++) {
        if (strcmp(b->v[i].name, name) == 0) {
            return sst__error(err, SST_EINVAL, "pregel: duplicate vertex '%s'", name);
        }
    }
    sst_vertex_opts defaults;
    if (opts == NULL) {
        sst_vertex_opts_init(&defaults);
        opts = &defaults;
    }
    if (opts->retry.max_attempts == 0) {
        return sst__error(err, SST_EINVAL, "pregel: vertex '%s': retry max_attempts must be >= 1",
                          name);
    }
    if (!sst_timeout_policy_valid(&opts->timeout)) {
        return sst__error(err, SST_EINVAL,
                          "pregel: vertex '%s': a timeout must be a positive number of seconds",
                          name);
    }
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 8;
        sst__vertex *v = sst__realloc(b->v, cap * sizeof *v);
        if (v == NULL) {
            return sst__enomem(err);
        }
        b->v = v;
        b->cap = cap;
    }
    sst__vertex *v = &b->v[b->n];
    memset(v, 0, sizeof *v);
    v->name = sst__strndup(name, len);
    if (v->name == NULL) {
        return sst__enomem(err);
    }
    v->name_len = len;
    v->fn = fn;
    v->user_data = user_data;
    v->config = opts->config != NULL ? sst_value_ref(opts->config) : sst_null();
    v->retry = opts->retry;
    v->combiner = opts->combiner;
    v->combiner_user_data = opts->combiner_user_data;
    v->defer = opts->defer;
    v->timeout = opts->timeout;
    v->cache = opts->cache;
    if (!(v->cache.ttl_s >= 0)) {
        sst__free(v->name);
        return sst__error(err, SST_EINVAL, "pregel: vertex '%s': cache ttl must be >= 0", name);
    }
    v->handler = SST__NO_VERTEX;
    if (opts->error_vertex != NULL &&
        (v->error_vertex = sst__strndup(opts->error_vertex, strlen(opts->error_vertex))) == NULL) {
        sst__free(v->name);
        return sst__enomem(err);
    }
    b->n++;
    return SST_OK;
}

static int vertex_ptr_cmp(const void *a, const void *b) {
    return strcmp((*(const sst__vertex *const *)a)->name, (*(const sst__vertex *const *)b)->name);
}

/* Fills @p idx with the vertex indexes in name order. false on OOM. */
static bool sort_by_name(const sst__vertex *v, uint32_t *idx, size_t n) {
    const sst__vertex **ptrs = sst__malloc(n * sizeof *ptrs);
    if (ptrs == NULL) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        ptrs[i] = &v[i];
    }
    qsort(ptrs, n, sizeof *ptrs, vertex_ptr_cmp);
    for (size_t i = 0; i < n; i++) {
        idx[i] = (uint32_t)(ptrs[i] - v);
    }
    sst__free(ptrs);
    return true;
}

size_t sst__pregel_find(const sst_pregel *p, const char *name, size_t len) {
    size_t mask = p->index_cap - 1;
    for (size_t i = sst__hash_bytes(name, len, 0) & mask;; i = (i + 1) & mask) {
        uint32_t slot = p->index[i];
        if (slot == 0) {
            return SIZE_MAX;
        }
        const sst__vertex *v = &p->v[slot - 1];
        if (v->name_len == len && memcmp(v->name, name, len) == 0) {
            return slot - 1;
        }
    }
}

void sst_pregel_builder_set_commit_fn(sst_pregel_builder *b, sst_commit_fn fn, void *user_data) {
    if (b != NULL) {
        b->commit_fn = fn;
        b->commit_user_data = user_data;
    }
}

sst_pregel *sst_pregel_builder_build(const sst_pregel_builder *b, sst_error *err) {
    if (b == NULL || b->n == 0) {
        sst__error(err, SST_EINVAL, "pregel: %s", b == NULL ? "NULL builder" : "no vertices");
        return NULL;
    }
    sst_pregel *p = sst__calloc(1, sizeof *p);
    if (p == NULL) {
        sst__enomem(err);
        return NULL;
    }
    p->schema = b->schema;
    p->commit_fn = b->commit_fn;
    p->commit_user_data = b->commit_user_data;
    p->index_cap = 16;
    while (p->index_cap < b->n * 2) {
        p->index_cap *= 2;
    }
    p->v = sst__calloc(b->n, sizeof *p->v);
    p->by_name = sst__malloc(b->n * sizeof *p->by_name);
    p->index = sst__calloc(p->index_cap, sizeof *p->index);
    if (p->v == NULL || p->by_name == NULL || p->index == NULL) {
        sst_pregel_free(p);
        sst__enomem(err);
        return NULL;
    }
    for (size_t i = 0; i < b->n; i++) {
        p->v[i] = b->v[i];
        p->v[i].name = sst__strndup(b->v[i].name, b->v[i].name_len);
        p->v[i].config = sst_value_ref(b->v[i].config);
        p->v[i].error_vertex = NULL;
        p->n++;
        if (p->v[i].name == NULL) {
            sst_pregel_free(p);
            sst__enomem(err);
            return NULL;
        }
        size_t mask = p->index_cap - 1;
        size_t h = sst__hash_bytes(p->v[i].name, p->v[i].name_len, 0) & mask;
        while (p->index[h] != 0) {
            h = (h + 1) & mask;
        }
        p->index[h] = (uint32_t)(i + 1);
    }
    if (!sort_by_name(p->v, p->by_name, p->n)) {
        sst_pregel_free(p);
        sst__enomem(err);
        return NULL;
    }
    for (size_t i = 0; i < b->n; i++) {
        const char *h = b->v[i].error_vertex;
        size_t k = h != NULL ? sst__pregel_find(p, h, strlen(h)) : SIZE_MAX;
        if (h != NULL && (k == SIZE_MAX || k == i)) {
            sst__error(err, SST_EINVAL, "pregel: vertex '%s': error vertex '%s' %s", p->v[i].name,
                       h, k == i ? "is the vertex itself" : "is unknown");
            sst_pregel_free(p);
            return NULL;
        }
        p->v[i].handler = h != NULL ? (uint32_t)k : SST__NO_VERTEX;
    }
    return p;
}

void sst_pregel_free(sst_pregel *p) {
    if (p == NULL) {
        return;
    }
    for (size_t i = 0; i < p->n; i++) {
        vertex_free(&p->v[i]);
    }
    sst__free(p->v);
    sst__free(p->by_name);
    sst__free(p->index);
    sst__free(p);
}

size_t sst_pregel_vertex_count(const sst_pregel *p) {
    return p != NULL ? p->n : 0;
}

const char *sst_pregel_vertex_name(const sst_pregel *p, size_t i) {
    return (p != NULL && i < p->n) ? p->v[i].name : NULL;
}
