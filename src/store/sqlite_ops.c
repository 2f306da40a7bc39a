/* SPDX-License-Identifier: MIT */
/*
 * The SQLite store's operations (sqlite_int.h describes the tables and the
 * locks). Writes run in one IMMEDIATE transaction each, bump the store's
 * generation and update the in-memory index after the commit (everything it
 * needs was allocated before). Searches rank and order with the index and
 * read only the rows they look at; a get reads its row directly.
 */
#include <stdio.h>
#include <string.h>

#include "sqlite_int.h"

/* ---- helpers ---- */

/* Ends the transaction: COMMIT when @p rc is SST_OK (its failure is returned), else ROLLBACK. */
static sst_code end_txn(sqstore *s, sst_code rc, const char *what, sst_error *err) {
    if (rc == SST_OK) {
        return sst__sqs_run(s, Q_COMMIT, what, err) ? SST_OK : sst__code(err);
    }
    sst__sqs_run(s, Q_ROLLBACK, what, NULL);
    return rc;
}

/* Binds a namespace (joined) and key to parameters 1 and 2 of @p q. */
static sst_code bind_ns_key(sqstore *s, int q, const char *const *ns, size_t ns_len,
                            const char *key, char **joined, sst_error *err) {
    *joined = sst__ns_join(ns, ns_len);
    if (*joined == NULL) {
        return sst__enomem(err);
    }
    sqlite3_bind_text(s->q[q], 1, *joined, -1, SQLITE_STATIC);
    sqlite3_bind_text(s->q[q], 2, key, -1, SQLITE_STATIC);
    return SST_OK;
}

/* The row id of (ns, key) into *id (0: none), within the caller's transaction. */
static sst_code find_row(sqstore *s, const char *const *ns, size_t ns_len, const char *key,
                         int64_t *id, sst_error *err) {
    char *joined;
    *id = 0;
    sst_code rc = bind_ns_key(s, Q_FIND, ns, ns_len, key, &joined, err);
    if (rc == SST_OK) {
        int step = sqlite3_step(s->q[Q_FIND]);
        *id = step == SQLITE_ROW ? sqlite3_column_int64(s->q[Q_FIND], 0) : 0;
        rc = step == SQLITE_ROW || step == SQLITE_DONE ? SST_OK
                                                       : sst__sqs_error(s, err, "finding an item");
        sqlite3_reset(s->q[Q_FIND]);
        sqlite3_clear_bindings(s->q[Q_FIND]);
    }
    sst__free(joined);
    return rc;
}

static bool set_generation(sqstore *s, int64_t gen, sst_error *err) {
    sqlite3_bind_int64(s->q[Q_SET_GENERATION], 1, gen);
    return sst__sqs_run(s, Q_SET_GENERATION, "writing the generation", err);
}

/* Deletes row @p id and its vectors. */
static bool delete_row(sqstore *s, int64_t id, sst_error *err) {
    sqlite3_bind_int64(s->q[Q_DEL_VECTORS], 1, id);
    sqlite3_bind_int64(s->q[Q_DEL_ITEM], 1, id);
    return sst__sqs_run(s, Q_DEL_VECTORS, "deleting vectors", err) &&
           sst__sqs_run(s, Q_DEL_ITEM, "deleting an item", err);
}

/* Takes both locks and opens a write transaction on a current index; *gen its generation. */
static sst_code begin_write(sqstore *s, int64_t *gen, sst_error *err) {
    pthread_rwlock_wrlock(&s->lk);
    pthread_mutex_lock(s->mu);
    if (!sst__sqs_run(s, Q_BEGIN_WRITE, "beginning a write", err)) {
        return sst__code(err);
    }
    sst_code rc = sst__sqs_sync_locked(s, gen, err);
    if (rc != SST_OK) {
        sst__sqs_run(s, Q_ROLLBACK, "reloading", NULL);
    }
    return rc;
}

static void unlock_write(sqstore *s) {
    pthread_mutex_unlock(s->mu);
    pthread_rwlock_unlock(&s->lk);
}

/* ---- put and delete ---- */

/* Writes the item row and its vectors (in the open transaction); *id its row. */
static sst_code write_item(sqstore *s, const sst_store_item *it, const char *joined, int64_t seq,
                           int64_t *id, sst_error *err) {
    sqlite3_stmt *q = s->q[Q_UPSERT];
    sqlite3_bind_text(q, 1, joined, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, it->key, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 3, it->json, (int)it->json_len, SQLITE_STATIC);
    sqlite3_bind_int64(q, 4, it->created_at_us);
    sqlite3_bind_int64(q, 5, it->updated_at_us);
    if (it->expires_at_us > 0) {
        sqlite3_bind_int64(q, 6, it->expires_at_us);
    }
    if (it->ttl_minutes > 0) {
        sqlite3_bind_double(q, 7, it->ttl_minutes);
    }
    sqlite3_bind_int64(q, 8, seq);
    int step = sqlite3_step(q);
    *id = step == SQLITE_ROW ? sqlite3_column_int64(q, 0) : 0;
    bool ok = step == SQLITE_ROW && sqlite3_step(q) == SQLITE_DONE;
    sst_code rc = ok ? SST_OK : sst__sqs_error(s, err, "writing an item");
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    sqlite3_bind_int64(s->q[Q_DEL_VECTORS], 1, *id);
    if (rc == SST_OK && !sst__sqs_run(s, Q_DEL_VECTORS, "replacing vectors", err)) {
        rc = sst__code(err);
    }
    size_t dims = s->ix.dims, bytes = dims * sizeof(float);
    /* Little-endian hosts bind the floats as they are; others convert a copy. */
    bool convert = sst__sqs_big_endian();
    void *blob = rc == SST_OK && it->n_vectors > 0 && convert ? sst__malloc(bytes) : NULL;
    rc = rc == SST_OK && convert && it->n_vectors > 0 && blob == NULL ? sst__enomem(err) : rc;
    for (size_t i = 0; rc == SST_OK && i < it->n_vectors; i++) {
        const float *row = it->vectors + i * dims;
        if (convert) {
            sst__sqs_floats_out(blob, row, dims);
        }
        sqlite3_bind_int64(s->q[Q_ADD_VECTOR], 1, *id);
        sqlite3_bind_int64(s->q[Q_ADD_VECTOR], 2, (int64_t)i);
        sqlite3_bind_blob(s->q[Q_ADD_VECTOR], 3, convert ? blob : (const void *)row, (int)bytes,
                          SQLITE_STATIC);
        rc = sst__sqs_run(s, Q_ADD_VECTOR, "writing a vector", err) ? SST_OK : sst__code(err);
    }
    sst__free(blob);
    return rc;
}

static sst_code sq_put(void *self, const sst_store_item *item, sst_error *err) {
    sqstore *s = self;
    if (sst__sqlite_db_batch_mine(s->conn)) { /* before any lock */
        return sst__sqs_in_batch(s, err);
    }
    if (item->n_vectors > 0 && item->dims != s->ix.dims) {
        return sst__error(err, SST_EINVAL, "store '%s': put: %zu-dim vectors, the store has %zu",
                          s->path, item->dims, s->ix.dims);
    }
    char *joined = sst__ns_join(item->ns, item->ns_len);
    if (joined == NULL) {
        return sst__enomem(err);
    }
    int64_t gen = 0, id = 0;
    sst__ixput p;
    bool prepared = false;
    sst_code rc = begin_write(s, &gen, err);
    if (rc == SST_OK) {
        rc =
            sst__index_prepare(&s->ix, item->ns, item->ns_len, item->key, item->n_vectors, &p, err);
        prepared = rc == SST_OK;
        rc = rc == SST_OK ? write_item(s, item, joined, gen + 1, &id, err) : rc;
        rc = rc == SST_OK && !set_generation(s, gen + 1, err) ? sst__code(err) : rc;
        rc = end_txn(s, rc, "committing a put", err);
    }
    if (rc == SST_OK) {
        uint32_t slot = sst__index_commit(&s->ix, &p, item->vectors, (uint64_t)gen + 1);
        s->ix.items[slot].rowid = id;
        s->generation = gen + 1;
    } else if (prepared) {
        sst__index_abort(&s->ix, &p);
    }
    unlock_write(s);
    sst__free(joined);
    return rc;
}

static sst_code sq_delete(void *self, const char *const *ns, size_t ns_len, const char *key,
                          sst_error *err) {
    sqstore *s = self;
    if (sst__sqlite_db_batch_mine(s->conn)) { /* before any lock */
        return sst__sqs_in_batch(s, err);
    }
    int64_t gen = 0, id = 0;
    uint32_t slot = SST__IX_NONE;
    sst_code rc = begin_write(s, &gen, err);
    if (rc == SST_OK) {
        rc = find_row(s, ns, ns_len, key, &id, err);
        rc = rc == SST_OK ? sst__index_lookup(&s->ix, ns, ns_len, key, &slot, err) : rc;
        if (rc == SST_OK && id != 0 &&
            (!delete_row(s, id, err) || !set_generation(s, gen + 1, err))) {
            rc = sst__code(err);
        }
        rc = end_txn(s, rc, "committing a delete", err);
    }
    if (rc == SST_OK && id != 0) {
        if (slot != SST__IX_NONE) {
            sst__index_remove(&s->ix, slot);
        }
        s->generation = gen + 1;
    }
    unlock_write(s);
    return rc;
}

/* ---- reading rows ---- */

/* The item of the current row of @p st, whose columns start at @p col (value, created, ...). */
static sst_store_item row_item(sqlite3_stmt *st, int col) {
    return (sst_store_item){
        .json = (const char *)sqlite3_column_text(st, col),
        .json_len = (size_t)sqlite3_column_bytes(st, col),
        .created_at_us = sqlite3_column_int64(st, col + 1),
        .updated_at_us = sqlite3_column_int64(st, col + 2),
        .expires_at_us = sqlite3_column_int64(st, col + 3),
        .ttl_minutes = sqlite3_column_double(st, col + 4),
    };
}

static bool expired(const sst_store_item *it, int64_t now) {
    return it->expires_at_us > 0 && it->expires_at_us <= now;
}

/* Refreshes the TTLs of rows @p ids (a write transaction of its own). */
static sst_code refresh_rows(sqstore *s, const int64_t *ids, size_t n, int64_t now,
                             sst_error *err) {
    if (n == 0 || s->read_only) {
        return SST_OK;
    }
    if (!sst__sqs_run(s, Q_BEGIN_WRITE, "refreshing TTLs", err)) {
        return sst__code(err);
    }
    sst_code rc = SST_OK;
    for (size_t i = 0; rc == SST_OK && i < n; i++) {
        sqlite3_bind_int64(s->q[Q_REFRESH], 1, now);
        sqlite3_bind_int64(s->q[Q_REFRESH], 2, ids[i]);
        rc = sst__sqs_run(s, Q_REFRESH, "refreshing TTLs", err) ? SST_OK : sst__code(err);
    }
    return end_txn(s, rc, "refreshing TTLs", err);
}

static sst_code sq_get(void *self, const char *const *ns, size_t ns_len, const char *key,
                       const sst_store_read *r, sst_store_item_fn each, void *user_data,
                       sst_error *err) {
    sqstore *s = self;
    pthread_mutex_lock(s->mu);
    char *joined;
    sst_code rc = bind_ns_key(s, Q_GET, ns, ns_len, key, &joined, err);
    sqlite3_stmt *st = s->q[Q_GET];
    int step = rc == SST_OK ? sqlite3_step(st) : SQLITE_DONE;
    int64_t id = 0;
    if (step == SQLITE_ROW) {
        sst_store_item it = row_item(st, 1);
        it.ns = ns;
        it.ns_len = ns_len;
        it.key = key;
        id = it.ttl_minutes > 0 && r->refresh_ttl ? sqlite3_column_int64(st, 0) : 0;
        if (!(r->omit_expired && expired(&it, r->now_us))) {
            rc = each(user_data, &it, err);
        }
    } else if (step != SQLITE_DONE) {
        rc = sst__sqs_error(s, err, "reading an item");
    }
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    sst__free(joined);
    if (rc == SST_OK && id != 0) {
        rc = refresh_rows(s, &id, 1, r->now_us, err);
    }
    pthread_mutex_unlock(s->mu);
    return rc;
}

/* ---- search ---- */

/* Row ids gathered for a TTL refresh. */
typedef struct idlist {
    int64_t *ids;
    size_t n, cap;
} idlist;

/* The row of index slot @p slot, checked against the index (another process may have
 * changed it); *found false when it is gone. The statement stays on the row. */
static sst_code fetch_row(sqstore *s, uint32_t slot, bool *found, sst_error *err) {
    const sst__ixitem *ix = &s->ix.items[slot];
    sqlite3_stmt *st = s->q[Q_ROW];
    *found = false;
    sqlite3_bind_int64(st, 1, ix->rowid);
    int step = sqlite3_step(st);
    if (step != SQLITE_ROW && step != SQLITE_DONE) {
        return sst__sqs_error(s, err, "reading an item");
    }
    if (step == SQLITE_ROW) {
        const char *ns = (const char *)sqlite3_column_text(st, 0);
        const char *key = (const char *)sqlite3_column_text(st, 1);
        *found = ns != NULL && key != NULL && strcmp(key, ix->key) == 0 &&
                 strcmp(ns, s->ix.ns[ix->ns].joined) == 0;
    }
    return SST_OK;
}

/* Walks the order, reading, filtering and paging rows (lk read, mu held, in a transaction). */
static sst_code page_rows(sqstore *s, const sst_store_query *q, sst__order *o,
                          sst_store_item_fn each, void *user_data, idlist *refresh,
                          sst_error *err) {
    size_t accepted = 0, want = q->offset + q->limit;
    want = want < q->offset ? SIZE_MAX : want; /* no wrap-around */
    uint32_t slot;
    bool scored, found;
    float score;
    sst_code rc = SST_OK;
    sqlite3_stmt *st = s->q[Q_ROW];
    while (rc == SST_OK && accepted < want && sst__order_next(o, &slot, &scored, &score)) {
        rc = fetch_row(s, slot, &found, err);
        if (rc != SST_OK || !found) { /* gone: another process deleted or replaced it */
            sqlite3_reset(st);
            continue;
        }
        const sst__ixitem *ix = &s->ix.items[slot];
        sst_store_item it = row_item(st, 2);
        it.ns = (const char *const *)s->ix.ns[ix->ns].labels;
        it.ns_len = s->ix.ns[ix->ns].len;
        it.key = ix->key;
        bool ok = !(q->read.omit_expired && expired(&it, q->read.now_us));
        if (ok && q->match != NULL) {
            rc = q->match(q->match_data, &it, &ok, err);
        }
        if (rc == SST_OK && ok && accepted++ >= q->offset) {
            if (q->read.refresh_ttl && it.ttl_minutes > 0) {
                if (refresh->n == refresh->cap && !sst__grow((void **)&refresh->ids, &refresh->cap,
                                                             refresh->n, sizeof(int64_t), 16)) {
                    rc = sst__enomem(err);
                } else {
                    refresh->ids[refresh->n++] = ix->rowid;
                }
            }
            it.scored = scored;
            it.score = score;
            rc = rc == SST_OK ? each(user_data, &it, err) : rc;
        }
        sqlite3_reset(st);
    }
    sqlite3_clear_bindings(st);
    return rc;
}

static sst_code sq_search(void *self, const sst_store_query *q, sst_store_item_fn each,
                          void *user_data, sst_error *err) {
    sqstore *s = self;
    sst_code rc = sst__sqs_fresh(s, err);
    if (rc != SST_OK) {
        return rc;
    }
    pthread_rwlock_rdlock(&s->lk);
    sst__order o;
    const float *vector = q->dims == s->ix.dims ? q->vector : NULL;
    rc = sst__order_make(&s->ix, q->prefix, q->prefix_len, vector, s->threads, NULL, &o, err);
    if (rc == SST_OK) {
        idlist refresh = {0};
        pthread_mutex_lock(s->mu);
        if (sst__sqs_run(s, Q_BEGIN, "beginning a search", err)) {
            rc = page_rows(s, q, &o, each, user_data, &refresh, err);
            sst__sqs_run(s, Q_COMMIT, "ending a search", NULL);
        } else {
            rc = sst__code(err);
        }
        rc = rc == SST_OK ? refresh_rows(s, refresh.ids, refresh.n, q->read.now_us, err) : rc;
        pthread_mutex_unlock(s->mu);
        sst__free(refresh.ids);
        sst__order_free(&o);
    }
    pthread_rwlock_unlock(&s->lk);
    return rc;
}

/* ---- list_namespaces and sweep ---- */

/* The namespaces holding unexpired items, from the file (mu held). */
static sst_code live_namespaces(sqstore *s, int64_t now, sst__nslist *l, sst_error *err) {
    sqlite3_stmt *st = s->q[Q_LIVE_NS];
    sqlite3_bind_int64(st, 1, now);
    int step;
    while (!l->oom && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *ns = (const char *)sqlite3_column_text(st, 0);
        size_t len = ns != NULL ? strlen(ns) : 0, max = 1;
        for (size_t i = 0; i < len; i++) {
            max += ns[i] == '.';
        }
        char *buf = sst__malloc(len + 1);
        const char **labels = sst__malloc(max * sizeof *labels);
        if (ns != NULL && buf != NULL && labels != NULL) {
            sst__nslist_add(l, labels, sst__sqs_split_ns(ns, buf, labels, max));
        } else {
            l->oom = ns != NULL;
        }
        sst__free(buf);
        sst__free(labels);
    }
    sst_code rc = l->oom || step == SQLITE_DONE ? SST_OK : sst__sqs_error(s, err, "listing");
    sqlite3_reset(st);
    return rc;
}

static sst_code sq_list(void *self, const sst_store_list_opts *q, const sst_store_read *r,
                        sst_store_ns_fn each, void *user_data, sst_error *err) {
    sqstore *s = self;
    sst_code rc = sst__sqs_fresh(s, err);
    if (rc != SST_OK) {
        return rc;
    }
    pthread_rwlock_rdlock(&s->lk);
    sst__nslist l;
    sst__nslist_init(&l, q);
    if (r->omit_expired) {
        pthread_mutex_lock(s->mu);
        rc = live_namespaces(s, r->now_us, &l, err);
        pthread_mutex_unlock(s->mu);
    } else {
        for (size_t i = 0; i < s->ix.n_ns; i++) {
            if (s->ix.ns[i].items > 0) {
                sst__nslist_add(&l, (const char *const *)s->ix.ns[i].labels, s->ix.ns[i].len);
            }
        }
    }
    if (rc == SST_OK) {
        rc = sst__nslist_emit(&l, each, user_data, err);
    } else {
        l.oom = true;
        sst__nslist_emit(&l, each, user_data, NULL);
    }
    pthread_rwlock_unlock(&s->lk);
    return rc;
}

/* The expired rows and their index slots (in the open transaction). */
static sst_code expired_rows(sqstore *s, int64_t now, idlist *ids, uint32_t **slots,
                             sst_error *err) {
    sqlite3_stmt *st = s->q[Q_EXPIRED];
    sqlite3_bind_int64(st, 1, now);
    sst_code rc = SST_OK;
    int step;
    size_t cap_slots = 0;
    while (rc == SST_OK && (step = sqlite3_step(st)) == SQLITE_ROW) {
        const char *ns = (const char *)sqlite3_column_text(st, 1);
        const char *key = (const char *)sqlite3_column_text(st, 2);
        size_t len = ns != NULL ? strlen(ns) : 0;
        char *buf = sst__malloc(len + 1);
        const char **labels = sst__malloc((len + 1) * sizeof *labels);
        bool grown = (ids->n < ids->cap ||
                      sst__grow((void **)&ids->ids, &ids->cap, ids->n, sizeof(int64_t), 16)) &&
                     (ids->n < cap_slots ||
                      sst__grow((void **)slots, &cap_slots, ids->n, sizeof(uint32_t), 16));
        rc = buf == NULL || labels == NULL || !grown || ns == NULL || key == NULL ? sst__enomem(err)
                                                                                  : SST_OK;
        if (rc == SST_OK) {
            size_t n = sst__sqs_split_ns(ns, buf, labels, len + 1);
            rc = sst__index_lookup(&s->ix, labels, n, key, &(*slots)[ids->n], err);
            ids->ids[ids->n++] = sqlite3_column_int64(st, 0);
        }
        sst__free(buf);
        sst__free(labels);
    }
    if (rc == SST_OK && step != SQLITE_DONE) {
        rc = sst__sqs_error(s, err, "finding expired items");
    }
    sqlite3_reset(st);
    return rc;
}

static sst_code sq_sweep(void *self, int64_t now_us, size_t *removed, sst_error *err) {
    sqstore *s = self;
    if (sst__sqlite_db_batch_mine(s->conn)) { /* before any lock */
        return sst__sqs_in_batch(s, err);
    }
    int64_t gen = 0;
    idlist ids = {0};
    uint32_t *slots = NULL;
    sst_code rc = begin_write(s, &gen, err);
    if (rc == SST_OK) {
        rc = expired_rows(s, now_us, &ids, &slots, err);
        for (size_t i = 0; rc == SST_OK && i < ids.n; i++) {
            rc = delete_row(s, ids.ids[i], err) ? SST_OK : sst__code(err);
        }
        rc = rc == SST_OK && ids.n > 0 && !set_generation(s, gen + 1, err) ? sst__code(err) : rc;
        rc = end_txn(s, rc, "committing a sweep", err);
    }
    if (rc == SST_OK && ids.n > 0) {
        for (size_t i = 0; i < ids.n; i++) {
            if (slots[i] != SST__IX_NONE) {
                sst__index_remove(&s->ix, slots[i]);
            }
        }
        s->generation = gen + 1;
    }
    unlock_write(s);
    *removed = rc == SST_OK ? ids.n : 0;
    sst__free(ids.ids);
    sst__free(slots);
    return rc;
}

const sst_store_ops sst__sqs_ops = {.version = SST_STORE_OPS_VERSION,
                                    .destroy = sst__sqs_destroy,
                                    .put = sq_put,
                                    .delete_item = sq_delete,
                                    .get = sq_get,
                                    .search = sq_search,
                                    .list_namespaces = sq_list,
                                    .sweep = sq_sweep};
