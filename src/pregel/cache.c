/* SPDX-License-Identifier: MIT */
/*
 * Node caching (LangGraph's CachePolicy): before a task of a vertex with a
 * cache policy runs, its writes are looked up in the run's cache under a key
 * made from its input; a hit replays them instead of running the task, and
 * a task that succeeds stores them. The cache is an optimisation: a failing
 * key function, lookup or store only means the task runs, or is not stored.
 */
#include <stdio.h>

#include "pregel_int.h"

bool sst__task_cacheable(const sst_task *t) {
    return t->ro->cache != NULL && t->p->v[t->vertex].cache.enabled &&
           t->origin == SST__NO_VERTEX && t->resume == NULL;
}

/* "writes|<run's part>|<vertex>" (the run's part cut to 200 bytes), cut to fit @p n. */
void sst__cache_ns(const char *part, const char *name, char *out, size_t n) {
    snprintf(out, n, "writes|%.200s|%s", part != NULL ? part : "", name);
}

static void cache_ns(const sst_task *t, char *out, size_t n) {
    sst__cache_ns(t->ro->cache_ns, sst_task_vertex(t), out, n);
}

sst_code sst_cache_clear_vertex(sst_cache *cache, const char *cache_ns, const char *vertex,
                                sst_error *err) {
    SST__ERR_LOCAL(err);
    if (cache == NULL || vertex == NULL) {
        return sst__error(err, SST_EINVAL, "cache: clear vertex: NULL %s",
                          cache == NULL ? "cache" : "vertex");
    }
    char ns[SST__VERTEX_NAME_MAX + 220];
    sst__cache_ns(cache_ns, vertex, ns, sizeof ns);
    return sst_cache_clear(cache, ns, err);
}

sst_value *sst__cache_key(const sst_task *t, const sst_cache_policy *p, sst_error *err) {
    if (p->key != NULL) {
        return p->key(t, p->key_user_data, err);
    }
    uint64_t h = t->input != NULL ? sst_value_hash(t->input) : sst_value_hash(t->state);
    if (t->input == NULL && t->inbox != NULL) {
        h = sst__hash_mix(h ^ sst_value_hash(t->inbox));
    }
    char hex[17];
    snprintf(hex, sizeof hex, "%016llx", (unsigned long long)h);
    return sst_string_new(hex, err);
}

bool sst__cache_lookup(sst_task *t) {
    sst_error err;
    sst_error_clear(&err);
    sst__task_ext *x = sst__task_ext_of(t);
    if (x == NULL) {
        return false;
    }
    sst_value_unref(x->cache_key);
    x->cache_key = sst__cache_key(t, &t->p->v[t->vertex].cache, &err);
    if (!sst_is_string(x->cache_key)) {
        sst_value_unref(x->cache_key);
        x->cache_key = NULL;
        return false;
    }
    char ns[SST__VERTEX_NAME_MAX + 220];
    cache_ns(t, ns, sizeof ns);
    sst_value *w = NULL;
    if (sst_cache_get(t->ro->cache, ns, sst_string_cstr(x->cache_key), &w, &err) != SST_OK ||
        w == NULL) {
        return false;
    }
    unsigned attempt = t->attempt;
    sst_code rc = sst__task_restore(t, w, &err);
    sst_value_unref(w);
    t->replayed = false; /* restored for this run: it counts as having run */
    t->attempt = attempt;
    if (rc != SST_OK) { /* an entry this vertex set cannot replay: run the task */
        sst__task_clear_outputs(t);
        return false;
    }
    t->cached = true;
    return true;
}

void sst__cache_store(sst_task *t) {
    if (t->ext == NULL || t->ext->cache_key == NULL) {
        return; /* no key: the lookup already failed */
    }
    sst_error err;
    sst_error_clear(&err);
    sst_value *w = sst__task_writes(t, &err);
    if (w == NULL) {
        return;
    }
    char ns[SST__VERTEX_NAME_MAX + 220];
    cache_ns(t, ns, sizeof ns);
    (void)!sst_cache_set(t->ro->cache, ns, sst_string_cstr(t->ext->cache_key), w,
                         t->p->v[t->vertex].cache.ttl_s, &err);
    sst_value_unref(w);
}

bool sst_task_cached(const sst_task *t) {
    return t != NULL && t->cached;
}
