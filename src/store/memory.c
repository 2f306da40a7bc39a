/* SPDX-License-Identifier: MIT */
/*
 * The in-memory store (LangGraph's InMemoryStore): the shared index (index.c)
 * holds everything, values included (SST_STORE_VALUES: a get returns the
 * value that was put, shared, not copied).
 *
 * Locking: one read-write lock. Puts, deletes and sweeps write; gets,
 * searches and listings read, so searches rank in parallel. A read that
 * refreshes TTLs stores the new expiry atomically under the read lock (an
 * item's expiry is the only thing readers change).
 */
#include <math.h>
#include <string.h>

#include "store_int.h"

typedef struct mstore {
    pthread_rwlock_t lk;
    sst__index ix; /* under lk */
    size_t threads;
} mstore;

static bool expired(const sst__ixitem *it, int64_t now) {
    int64_t e = atomic_load_explicit(&it->expires_at_us, memory_order_relaxed);
    return e > 0 && e <= now;
}

static void refresh(sst__ixitem *it, int64_t now) {
    if (it->ttl_minutes > 0) {
        int64_t e = now + (int64_t)llround(it->ttl_minutes * 60e6);
        atomic_store_explicit(&it->expires_at_us, e, memory_order_relaxed);
    }
}

/* The item in @p slot as the contract hands it out. */
static sst_store_item item_of(const sst__index *ix, uint32_t slot) {
    const sst__ixitem *it = &ix->items[slot];
    const sst__ixns *n = &ix->ns[it->ns];
    return (sst_store_item){
        .ns = (const char *const *)n->labels,
        .ns_len = n->len,
        .key = it->key,
        .value = it->value,
        .created_at_us = it->created_at_us,
        .updated_at_us = it->updated_at_us,
        .expires_at_us = atomic_load_explicit(&it->expires_at_us, memory_order_relaxed),
        .ttl_minutes = it->ttl_minutes,
        .dims = ix->dims,
    };
}

static sst_code m_put(void *self, const sst_store_item *item, sst_error *err) {
    mstore *m = self;
    pthread_rwlock_wrlock(&m->lk);
    sst__ixput p;
    sst_code rc =
        sst__index_prepare(&m->ix, item->ns, item->ns_len, item->key, item->n_vectors, &p, err);
    if (rc == SST_OK) {
        uint32_t slot = sst__index_commit(&m->ix, &p, item->vectors, m->ix.seq + 1);
        sst__ixitem *it = &m->ix.items[slot];
        sst_value_unref(it->value);
        it->value = sst_value_ref(item->value);
        it->created_at_us = p.existing ? it->created_at_us : item->created_at_us;
        it->updated_at_us = item->updated_at_us;
        atomic_store_explicit(&it->expires_at_us, item->expires_at_us, memory_order_relaxed);
        it->ttl_minutes = item->ttl_minutes;
    }
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

static sst_code m_delete(void *self, const char *const *ns, size_t ns_len, const char *key,
                         sst_error *err) {
    mstore *m = self;
    pthread_rwlock_wrlock(&m->lk);
    uint32_t slot;
    sst_code rc = sst__index_lookup(&m->ix, ns, ns_len, key, &slot, err);
    if (rc == SST_OK && slot != SST__IX_NONE) {
        sst__index_remove(&m->ix, slot);
    }
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

static sst_code m_get(void *self, const char *const *ns, size_t ns_len, const char *key,
                      const sst_store_read *r, sst_store_item_fn each, void *user_data,
                      sst_error *err) {
    mstore *m = self;
    pthread_rwlock_rdlock(&m->lk);
    uint32_t slot;
    sst_code rc = sst__index_lookup(&m->ix, ns, ns_len, key, &slot, err);
    if (rc == SST_OK && slot != SST__IX_NONE &&
        !(r->omit_expired && expired(&m->ix.items[slot], r->now_us))) {
        if (r->refresh_ttl) {
            refresh(&m->ix.items[slot], r->now_us);
        }
        sst_store_item item = item_of(&m->ix, slot);
        rc = each(user_data, &item, err);
    }
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

/*
 * A search with a query and a filter may go filter first: the filter's
 * verdict on every live item under the prefix (one byte per item slot,
 * SST__KEEP_*), so that only the vectors of the items that match are
 * scored. That pays when few items match: matching an item costs about as
 * much as scoring MATCH_FLOATS floats (measured with bench/bench_store.c,
 * 1536 dims: ~0.1 us an item against ~0.35 us a row on 2 threads), so going
 * filter first costs N * MATCH_FLOATS + matched * floats_per_item instead of
 * N * floats_per_item. The share that matches is estimated on SAMPLE items
 * spread over the slots first, and filter first is chosen when it is below
 * SHARE_MAX of the break-even share (1 - MATCH_FLOATS / floats_per_item),
 * so a filter matching nearly everything takes the lazy path as before.
 *
 * The verdicts are the ones paging would reach (same items, same time): an
 * item the filter fails on is left undecided, for paging to ask again and
 * fail on only if it gets there, as the lazy path would. NULL: go lazy
 * (rank everything, filter while paging), also when out of memory.
 */
#define MATCH_FLOATS 512.0
#define SAMPLE       64
#define SHARE_MAX    0.75

static uint8_t verdict(const mstore *m, const sst_store_query *q, const uint8_t *ns, size_t i) {
    const sst__ixitem *it = &m->ix.items[i];
    if (it->mapkey == NULL || !ns[it->ns] ||
        (q->read.omit_expired && expired(it, q->read.now_us))) {
        return SST__KEEP_NO;
    }
    sst_store_item item = item_of(&m->ix, (uint32_t)i);
    bool ok = false;
    sst_error scratch;
    return q->match(q->match_data, &item, &ok, &scratch) != SST_OK ? SST__KEEP_UNKNOWN
           : ok                                                    ? SST__KEEP_MATCHED
                                                                   : SST__KEEP_NO;
}

/* The verdicts of slots [from, to) not decided yet (0xff). */
typedef struct verdict_job {
    const mstore *m;
    const sst_store_query *q;
    const uint8_t *ns;
    uint8_t *keep;
    size_t from, to;
} verdict_job;

static void *verdict_run(void *arg) {
    verdict_job *j = arg;
    for (size_t i = j->from; i < j->to; i++) {
        j->keep[i] = j->keep[i] == 0xff ? verdict(j->m, j->q, j->ns, i) : j->keep[i];
    }
    return NULL;
}

/*
 * All the verdicts, the slots split over the search's threads (values are
 * scattered in memory, so matching is bound by cache misses, which threads
 * overlap). The matcher only reads the items. A thread that cannot start
 * leaves its share to the caller.
 */
#define VERDICT_MIN_ITEMS 8192
#define VERDICT_THREADS   16

static void verdicts(const mstore *m, const sst_store_query *q, const uint8_t *ns, uint8_t *keep) {
    size_t n = m->ix.n_items, threads = m->threads;
    threads = threads > VERDICT_THREADS ? VERDICT_THREADS : threads;
    threads = n < VERDICT_MIN_ITEMS || threads < 1 ? 1 : threads;
    verdict_job jobs[VERDICT_THREADS];
    pthread_t tids[VERDICT_THREADS];
    bool started[VERDICT_THREADS] = {false};
    for (size_t t = 0; t < threads; t++) {
        jobs[t] = (verdict_job){.m = m,
                                .q = q,
                                .ns = ns,
                                .keep = keep,
                                .from = n * t / threads,
                                .to = n * (t + 1) / threads};
        started[t] = t > 0 && pthread_create(&tids[t], NULL, verdict_run, &jobs[t]) == 0;
    }
    verdict_run(&jobs[0]);
    for (size_t t = 1; t < threads; t++) {
        if (started[t]) {
            pthread_join(tids[t], NULL);
        } else {
            verdict_run(&jobs[t]);
        }
    }
}

static uint8_t *m_prefilter(const mstore *m, const sst_store_query *q) {
    const sst__index *ix = &m->ix;
    double per_item = (double)ix->dims * (double)ix->vecs.n / (double)(ix->live > 0 ? ix->live : 1);
    double share_max = SHARE_MAX * (1.0 - MATCH_FLOATS / per_item);
    if (share_max <= 0) {
        return NULL;
    }
    uint8_t *ns = sst__order_ns_mask(ix, q->prefix, q->prefix_len);
    uint8_t *keep = ns != NULL ? sst__malloc(ix->n_items > 0 ? ix->n_items : 1) : NULL;
    if (keep == NULL) {
        sst__free(ns);
        return NULL;
    }
    memset(keep, 0xff, ix->n_items); /* not looked at yet */
    size_t seen = 0, kept = 0;
    for (size_t j = 0; j < SAMPLE && ix->n_items > 0; j++) {
        size_t i = j * ix->n_items / SAMPLE;
        if (keep[i] == 0xff) {
            keep[i] = verdict(m, q, ns, i);
            seen += ix->items[i].mapkey != NULL && ns[ix->items[i].ns];
            kept += keep[i] != SST__KEEP_NO;
        }
    }
    if ((double)kept > share_max * (double)seen) {
        sst__free(keep);
        keep = NULL;
    }
    if (keep != NULL) {
        verdicts(m, q, ns, keep);
    }
    sst__free(ns);
    return keep;
}

/* Walks the order, filtering (but the items @p keep says matched) and paging (the lock is held). */
static sst_code m_page(mstore *m, const sst_store_query *q, sst__order *o, const uint8_t *keep,
                       sst_store_item_fn each, void *user_data, sst_error *err) {
    size_t accepted = 0, want = q->offset + q->limit;
    want = want < q->offset ? SIZE_MAX : want; /* no wrap-around */
    uint32_t slot;
    bool scored;
    float score;
    sst_code rc = SST_OK;
    while (rc == SST_OK && accepted < want && sst__order_next(o, &slot, &scored, &score)) {
        sst__ixitem *it = &m->ix.items[slot];
        if (q->read.omit_expired && expired(it, q->read.now_us)) {
            continue;
        }
        sst_store_item item = item_of(&m->ix, slot);
        bool ok = true;
        bool decided = keep != NULL && keep[slot] == SST__KEEP_MATCHED;
        if (q->match != NULL && !decided &&
            (rc = q->match(q->match_data, &item, &ok, err)) != SST_OK) {
            break;
        }
        if (!ok || accepted++ < q->offset) {
            continue;
        }
        if (q->read.refresh_ttl) {
            refresh(it, q->read.now_us);
        }
        item.scored = scored;
        item.score = score;
        rc = each(user_data, &item, err);
    }
    return rc;
}

static sst_code m_search(void *self, const sst_store_query *q, sst_store_item_fn each,
                         void *user_data, sst_error *err) {
    mstore *m = self;
    pthread_rwlock_rdlock(&m->lk);
    sst__order o;
    const float *vector = q->dims == m->ix.dims ? q->vector : NULL;
    bool ranks = vector != NULL && m->ix.dims > 0 && m->ix.vecs.n > 0;
    uint8_t *keep = ranks && q->match != NULL ? m_prefilter(m, q) : NULL;
    sst_code rc =
        sst__order_make(&m->ix, q->prefix, q->prefix_len, vector, m->threads, keep, &o, err);
    if (rc == SST_OK) {
        rc = m_page(m, q, &o, keep, each, user_data, err);
        sst__order_free(&o);
    }
    sst__free(keep);
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

static sst_code m_list(void *self, const sst_store_list_opts *q, const sst_store_read *r,
                       sst_store_ns_fn each, void *user_data, sst_error *err) {
    mstore *m = self;
    pthread_rwlock_rdlock(&m->lk);
    sst__index *ix = &m->ix;
    uint8_t *live = sst__calloc(ix->n_ns > 0 ? ix->n_ns : 1, 1);
    for (size_t i = 0; live != NULL && i < ix->n_items; i++) {
        const sst__ixitem *it = &ix->items[i];
        if (it->mapkey != NULL && !(r->omit_expired && expired(it, r->now_us))) {
            live[it->ns] = 1;
        }
    }
    sst__nslist l;
    sst__nslist_init(&l, q);
    l.oom = live == NULL;
    for (size_t i = 0; live != NULL && i < ix->n_ns; i++) {
        if (live[i]) {
            sst__nslist_add(&l, (const char *const *)ix->ns[i].labels, ix->ns[i].len);
        }
    }
    sst__free(live);
    sst_code rc = sst__nslist_emit(&l, each, user_data, err);
    pthread_rwlock_unlock(&m->lk);
    return rc;
}

static sst_code m_sweep(void *self, int64_t now_us, size_t *removed, sst_error *err) {
    (void)err;
    mstore *m = self;
    pthread_rwlock_wrlock(&m->lk);
    size_t n = 0;
    for (size_t i = 0; i < m->ix.n_items; i++) {
        if (m->ix.items[i].mapkey != NULL && expired(&m->ix.items[i], now_us)) {
            sst__index_remove(&m->ix, (uint32_t)i);
            n++;
        }
    }
    pthread_rwlock_unlock(&m->lk);
    *removed = n;
    return SST_OK;
}

static void m_destroy(void *self) {
    mstore *m = self;
    sst__index_free(&m->ix);
    pthread_rwlock_destroy(&m->lk);
    sst__free(m);
}

sst_store *sst_memory_store_new(const sst_store_opts *o, sst_error *err) {
    static const sst_store_ops ops = {.version = SST_STORE_OPS_VERSION,
                                      .flags = SST_STORE_VALUES,
                                      .destroy = m_destroy,
                                      .put = m_put,
                                      .delete_item = m_delete,
                                      .get = m_get,
                                      .search = m_search,
                                      .list_namespaces = m_list,
                                      .sweep = m_sweep};
    mstore *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_rwlock_init(&m->lk, NULL);
    sst__index_init(&m->ix, o != NULL ? o->index.dims : 0);
    m->threads = sst__store_threads(o != NULL ? o->search_threads : 0);
    return sst__store_wrap(&ops, m, o, err);
}
