/* SPDX-License-Identifier: MIT */
/*
 * The store handle (store.h): the reference count, the options, and the
 * calls, which check their arguments, apply the TTL defaults, embed through
 * the hook (embed.c) and turn the backend's items into values (items.c).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "store_int.h"
#include "values/build.h"

/* ---- options ---- */

void sst_store_opts_init(sst_store_opts *o) {
    memset(o, 0, sizeof *o);
    o->refresh_on_read = true;
}

void sst_store_put_opts_init(sst_store_put_opts *o) {
    memset(o, 0, sizeof *o);
}

void sst_store_search_opts_init(sst_store_search_opts *o) {
    memset(o, 0, sizeof *o);
    o->limit = 10;
    o->refresh_ttl = -1;
}

void sst_store_list_opts_init(sst_store_list_opts *o) {
    memset(o, 0, sizeof *o);
    o->limit = 100;
}

size_t sst__store_threads(size_t requested) {
    if (requested > 0) {
        return requested;
    }
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 4 ? 4 : (size_t)cpus;
}

int64_t sst__store_now(const sst_store *st) {
    return st->clock != NULL ? st->clock(st->clock_user_data) : sst__clock_us();
}

sst_code sst__store_check_opts(const sst_store_opts *o, sst_error *err) {
    if (o->index.dims > 0 && o->index.embed == NULL) {
        return sst__error(err, SST_EINVAL, "store: index.dims is %zu but index.embed is NULL",
                          o->index.dims);
    }
    if (o->index.dims > ((size_t)1 << 20)) {
        return sst__error(err, SST_EINVAL, "store: index.dims %zu is too large (at most 1048576)",
                          o->index.dims);
    }
    if (o->index.n_fields > 0 && o->index.fields == NULL) {
        return sst__error(err, SST_EINVAL, "store: index.fields is NULL with n_fields %zu",
                          o->index.n_fields);
    }
    for (size_t i = 0; i < o->index.n_fields; i++) {
        if (o->index.fields[i] == NULL) {
            return sst__error(err, SST_EINVAL, "store: index.fields[%zu] is NULL", i);
        }
    }
    if (!isfinite(o->default_ttl_minutes) || o->default_ttl_minutes < 0 ||
        o->default_ttl_minutes > 1e11) {
        return sst__error(err, SST_EINVAL,
                          "store: default_ttl_minutes must be 0 (none) or positive minutes");
    }
    if (!isfinite(o->sweep_interval_minutes) || o->sweep_interval_minutes < 0) {
        return sst__error(err, SST_EINVAL,
                          "store: sweep_interval_minutes must be 0 (no sweeper) or positive");
    }
    return SST_OK;
}

/* The store's fields, parsed (the default is LangGraph's ["$"]). */
static sst_code take_fields(sst_store *st, const sst_store_opts *o, sst_error *err) {
    static const char *const whole[] = {"$"};
    const char *const *fields = o->index.n_fields > 0 ? o->index.fields : whole;
    size_t n = o->index.n_fields > 0 ? o->index.n_fields : 1;
    st->fields = sst__calloc(n, sizeof *st->fields);
    if (st->fields == NULL) {
        return sst__enomem(err);
    }
    for (size_t i = 0; i < n; i++) {
        if (sst__path_parse(fields[i], &st->fields[i], err) != SST_OK) {
            return SST_ENOMEM;
        }
        st->n_fields++;
    }
    return SST_OK;
}

static void store_release(sst_store *st) {
    for (size_t i = 0; i < st->n_fields; i++) {
        sst__path_free(&st->fields[i]);
    }
    sst__free(st->fields);
    pthread_cond_destroy(&st->sweep_cv);
    pthread_mutex_destroy(&st->sweep_mu);
    sst__free(st);
}

static sst_code check_ops(const sst_store_ops *ops, sst_error *err) {
    if (ops == NULL || ops->version == 0) {
        return sst__error(err, SST_EINVAL, "store: ops.version must be SST_STORE_OPS_VERSION (%d)",
                          SST_STORE_OPS_VERSION);
    }
    if (ops->version > SST_STORE_OPS_VERSION) {
        return sst__error(err, SST_ENOTSUP,
                          "store: the backend was built for store ops version %u; this library "
                          "knows versions up to %d",
                          ops->version, SST_STORE_OPS_VERSION);
    }
    if (ops->put == NULL || ops->delete_item == NULL || ops->get == NULL || ops->search == NULL ||
        ops->list_namespaces == NULL) {
        return sst__error(err, SST_EINVAL,
                          "store: put, delete_item, get, search and list_namespaces are required");
    }
    return SST_OK;
}

sst_store *sst_store_new(const sst_store_ops *ops, void *self, const sst_store_opts *opts,
                         sst_error *err) {
    sst_store_opts defaults;
    sst_store_opts_init(&defaults);
    const sst_store_opts *o = opts != NULL ? opts : &defaults;
    if (check_ops(ops, err) != SST_OK || sst__store_check_opts(o, err) != SST_OK) {
        return NULL;
    }
    sst_store *st = sst__calloc(1, sizeof *st);
    if (st == NULL) {
        sst__enomem(err);
        return NULL;
    }
    /* Version 1 is this whole struct; a later version copies what it knows. */
    memcpy(&st->ops, ops, sizeof st->ops);
    st->self = self;
    atomic_init(&st->refs, 1);
    st->dims = o->index.dims;
    st->embed = o->index.embed;
    st->embed_user_data = o->index.embed_user_data;
    st->default_ttl_minutes = o->default_ttl_minutes;
    st->refresh_on_read = o->refresh_on_read;
    st->omit_expired = o->omit_expired;
    st->clock = o->clock;
    st->clock_user_data = o->clock_user_data;
    st->sweep_interval_minutes = o->sweep_interval_minutes;
    pthread_mutex_init(&st->sweep_mu, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&st->sweep_cv, &ca);
    pthread_condattr_destroy(&ca);
    if (take_fields(st, o, err) != SST_OK || sst__sweeper_start(st, err) != SST_OK) {
        store_release(st);
        return NULL;
    }
    return st;
}

sst_store *sst__store_wrap(const sst_store_ops *ops, void *self, const sst_store_opts *o,
                           sst_error *err) {
    sst_store *st = sst_store_new(ops, self, o, err);
    if (st == NULL) {
        ops->destroy(self);
    }
    return st;
}

sst_store *sst_store_ref(sst_store *st) {
    if (st != NULL) {
        atomic_fetch_add_explicit(&st->refs, 1, memory_order_relaxed);
    }
    return st;
}

void sst_store_free(sst_store *st) {
    if (st == NULL || atomic_fetch_sub_explicit(&st->refs, 1, memory_order_acq_rel) != 1) {
        return;
    }
    sst__sweeper_stop(st);
    if (st->ops.destroy != NULL) {
        st->ops.destroy(st->self);
    }
    store_release(st);
}

void *sst_store_self(const sst_store *st) {
    return st != NULL ? st->self : NULL;
}

size_t sst_store_dims(const sst_store *st) {
    return st != NULL ? st->dims : 0;
}

/* ---- argument checks ---- */

static sst_code need_store(const sst_store *st, const char *what, sst_error *err) {
    return st != NULL ? SST_OK : sst__error(err, SST_EINVAL, "%s: NULL store", what);
}

static sst_code check_key(const char *key, const char *what, sst_error *err) {
    if (key == NULL) {
        return sst__error(err, SST_EINVAL, "%s: the key is NULL", what);
    }
    return sst_utf8_valid(key, strlen(key))
               ? SST_OK
               : sst__error(err, SST_EINVAL, "%s: the key is not valid UTF-8", what);
}

static sst_code check_item_args(const sst_store *st, const char *const *ns, size_t ns_len,
                                const char *key, unsigned flags, const char *what, sst_error *err) {
    if (need_store(st, what, err) != SST_OK ||
        sst__ns_check(ns, ns_len, flags, what, err) != SST_OK) {
        return SST_EINVAL;
    }
    return check_key(key, what, err);
}

static sst_store_read read_opts(const sst_store *st, int refresh_ttl) {
    return (sst_store_read){.now_us = sst__store_now(st),
                            .refresh_ttl = refresh_ttl < 0 ? st->refresh_on_read : refresh_ttl != 0,
                            .omit_expired = st->omit_expired};
}

/* ---- put and delete ---- */

/* The TTL a put asks for: *ttl 0 for none. */
static sst_code put_ttl(const sst_store *st, const sst_store_put_opts *o, double *ttl,
                        sst_error *err) {
    double t = o != NULL ? o->ttl_minutes : SST_STORE_TTL_DEFAULT;
    if (!isfinite(t) || (t < 0 && t != SST_STORE_TTL_NONE) || t > 1e11) {
        return sst__error(err, SST_EINVAL,
                          "store put: ttl_minutes must be positive minutes (at most 1e11), "
                          "SST_STORE_TTL_DEFAULT or SST_STORE_TTL_NONE");
    }
    *ttl = t == SST_STORE_TTL_DEFAULT ? st->default_ttl_minutes : t < 0 ? 0 : t;
    return SST_OK;
}

/* The vectors of a put (none without an index or with no_index). */
static sst_code put_vectors(sst_store *st, const sst_value *value, const sst_store_put_opts *o,
                            float **vectors, size_t *n, sst_error *err) {
    *vectors = NULL;
    *n = 0;
    if (st->dims == 0 || (o != NULL && o->no_index)) {
        return SST_OK;
    }
    if (o == NULL || o->index_fields == NULL) {
        return sst__embed_value(st, value, st->fields, st->n_fields, vectors, n, err);
    }
    size_t np = o->n_index_fields;
    sst__path *paths = sst__calloc(np > 0 ? np : 1, sizeof *paths);
    sst_code rc = paths == NULL ? sst__enomem(err) : SST_OK;
    size_t made = 0;
    for (; rc == SST_OK && made < np; made++) {
        rc = o->index_fields[made] == NULL
                 ? sst__error(err, SST_EINVAL, "store put: index_fields[%zu] is NULL", made)
                 : sst__path_parse(o->index_fields[made], &paths[made], err);
    }
    if (rc == SST_OK) {
        rc = sst__embed_value(st, value, paths, np, vectors, n, err);
    }
    for (size_t i = 0; paths != NULL && i < made; i++) {
        sst__path_free(&paths[i]);
    }
    sst__free(paths);
    return rc;
}

sst_code sst_store_put(sst_store *st, const char *const *ns, size_t ns_len, const char *key,
                       const sst_value *value, const sst_store_put_opts *o, sst_error *err) {
    static const char what[] = "store put";
    SST__ERR_LOCAL(err);
    double ttl = 0;
    if (check_item_args(st, ns, ns_len, key, SST__NS_PUT, what, err) != SST_OK ||
        put_ttl(st, o, &ttl, err) != SST_OK) {
        return SST_EINVAL;
    }
    if (value == NULL || !sst_is_object(value)) {
        return sst__error(err, SST_ETYPE, "%s: the value must be an object, got %s", what,
                          value == NULL ? "NULL" : sst_type_name(sst_value_type(value)));
    }
    float *vectors = NULL;
    size_t n_vectors = 0;
    sst_code rc = put_vectors(st, value, o, &vectors, &n_vectors, err);
    if (rc != SST_OK) {
        return rc;
    }
    int64_t now = sst__store_now(st);
    sst_store_item item = {.ns = ns,
                           .ns_len = ns_len,
                           .key = key,
                           .created_at_us = now,
                           .updated_at_us = now,
                           .expires_at_us = ttl > 0 ? now + (int64_t)llround(ttl * 60e6) : 0,
                           .ttl_minutes = ttl,
                           .vectors = vectors,
                           .n_vectors = n_vectors,
                           .dims = st->dims};
    char *json = NULL;
    if ((st->ops.flags & SST_STORE_VALUES) != 0) {
        item.value = value;
    } else if ((json = sst_json_write(value, SST_JSON_COMPACT, &item.json_len, err)) == NULL) {
        sst__free(vectors);
        return sst__code(err);
    }
    item.json = json;
    rc = st->ops.put(st->self, &item, err);
    sst_free(json);
    sst__free(vectors);
    return rc;
}

sst_code sst_store_delete(sst_store *st, const char *const *ns, size_t ns_len, const char *key,
                          sst_error *err) {
    if (check_item_args(st, ns, ns_len, key, 0, "store delete", err) != SST_OK) {
        return SST_EINVAL;
    }
    return st->ops.delete_item(st->self, ns, ns_len, key, err);
}

/* ---- get ---- */

static sst_code get_each(void *user_data, const sst_store_item *item, sst_error *err) {
    sst_value **out = user_data;
    sst_value_unref(*out);
    *out = sst__item_value(item, NULL, false, err);
    return *out != NULL ? SST_OK : sst__code(err);
}

sst_value *sst_store_get(sst_store *st, const char *const *ns, size_t ns_len, const char *key,
                         int refresh_ttl, sst_error *err) {
    SST__ERR_LOCAL(err);
    if (check_item_args(st, ns, ns_len, key, 0, "store get", err) != SST_OK) {
        return NULL;
    }
    sst_store_read r = read_opts(st, refresh_ttl);
    sst_value *item = NULL;
    sst_code rc = st->ops.get(st->self, ns, ns_len, key, &r, get_each, &item, err);
    if (rc != SST_OK) {
        sst_value_unref(item);
        return NULL;
    }
    return item != NULL ? item : sst_null();
}

/* ---- search ---- */

static sst_code match_item(void *match_data, const sst_store_item *item, bool *matches,
                           sst_error *err) {
    sst_value *v = sst__item_payload(item, err);
    if (v == NULL) {
        return sst__code(err);
    }
    *matches = sst__filter_match(match_data, v);
    sst_value_unref(v);
    return SST_OK;
}

static sst_code push_item(void *user_data, const sst_store_item *item, sst_error *err) {
    sst_value **out = user_data;
    *out = sst__push_take(*out, sst__item_value(item, NULL, true, err), err);
    return *out != NULL ? SST_OK : sst__code(err);
}

static sst_code check_search(const sst_store *st, const sst_store_search_opts *q, sst_error *err) {
    if (need_store(st, "store search", err) != SST_OK ||
        sst__ns_check(q->prefix, q->prefix_len, SST__NS_EMPTY_OK, "store search", err) != SST_OK) {
        return SST_EINVAL;
    }
    if (q->query != NULL && !sst_utf8_valid(q->query, strlen(q->query))) {
        return sst__error(err, SST_EINVAL, "store search: the query is not valid UTF-8");
    }
    return sst__filter_check(q->filter, err);
}

sst_value *sst_store_search(sst_store *st, const sst_store_search_opts *q, sst_error *err) {
    SST__ERR_LOCAL(err);
    sst_store_search_opts defaults;
    sst_store_search_opts_init(&defaults);
    q = q != NULL ? q : &defaults;
    if (check_search(st, q, err) != SST_OK) {
        return NULL;
    }
    float *vector = NULL;
    if (q->query != NULL && q->query[0] != '\0' && st->dims > 0 &&
        sst__embed_query(st, q->query, &vector, err) != SST_OK) {
        return NULL;
    }
    bool filtered = q->filter != NULL && sst_object_len(q->filter) > 0;
    sst_store_query bq = {.prefix = q->prefix,
                          .prefix_len = q->prefix_len,
                          .vector = vector,
                          .dims = st->dims,
                          .limit = q->limit > 0 ? q->limit : 10,
                          .offset = q->offset,
                          .match = filtered ? match_item : NULL,
                          .match_data = filtered ? (void *)q->filter : NULL,
                          .read = read_opts(st, q->refresh_ttl)};
    sst_value *out = sst_array_empty();
    sst_code rc = st->ops.search(st->self, &bq, push_item, &out, err);
    sst__free(vector);
    if (rc != SST_OK) {
        sst_value_unref(out);
        return NULL;
    }
    return out;
}

/* ---- list_namespaces and sweep ---- */

static sst_code push_ns(void *user_data, const char *const *ns, size_t ns_len, sst_error *err) {
    sst_value **out = user_data;
    sst_value *a = sst_array_empty();
    for (size_t i = 0; i < ns_len && a != NULL; i++) {
        a = sst__push_take(a, sst_string_new(ns[i], err), err);
    }
    *out = sst__push_take(*out, a, err);
    return *out != NULL ? SST_OK : sst__code(err);
}

sst_value *sst_store_list_namespaces(sst_store *st, const sst_store_list_opts *q, sst_error *err) {
    static const char what[] = "store list_namespaces";
    SST__ERR_LOCAL(err);
    sst_store_list_opts defaults;
    sst_store_list_opts_init(&defaults);
    sst_store_list_opts lq = q != NULL ? *q : defaults;
    unsigned flags = SST__NS_WILDCARD | SST__NS_EMPTY_OK;
    if (need_store(st, what, err) != SST_OK ||
        sst__ns_check(lq.prefix, lq.prefix_len, flags, what, err) != SST_OK ||
        sst__ns_check(lq.suffix, lq.suffix_len, flags, what, err) != SST_OK) {
        return NULL;
    }
    lq.limit = lq.limit > 0 ? lq.limit : 100;
    sst_store_read r = read_opts(st, 0);
    sst_value *out = sst_array_empty();
    sst_code rc = st->ops.list_namespaces(st->self, &lq, &r, push_ns, &out, err);
    if (rc != SST_OK) {
        sst_value_unref(out);
        return NULL;
    }
    return out;
}

sst_code sst_store_sweep_ttl(sst_store *st, size_t *removed, sst_error *err) {
    size_t n = 0;
    if (removed != NULL) {
        *removed = 0;
    }
    if (need_store(st, "store sweep_ttl", err) != SST_OK) {
        return SST_EINVAL;
    }
    if (st->ops.sweep == NULL) {
        return sst__error(err, SST_ENOTSUP, "store sweep_ttl: this backend cannot sweep");
    }
    sst_code rc = st->ops.sweep(st->self, sst__store_now(st), &n, err);
    if (removed != NULL && rc == SST_OK) {
        *removed = n;
    }
    return rc;
}
