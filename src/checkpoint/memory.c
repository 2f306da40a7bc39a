/* SPDX-License-Identifier: MIT */
/*
 * The in-memory saver: per thread, copies of its records in the order they
 * were put (payload values are kept as given: SST_SAVER_VALUES), the writes
 * of each, the thread's metadata, and a table of shared blobs counted by the
 * records that refer to them. A mutex guards every call; a condition
 * variable lets a waiting invoke sleep until a thread is free.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint_int.h"
#include "values/build.h"

typedef struct mem_rec {
    sst_checkpoint *rec;    /* owned copy; its blobs without content */
    sst_checkpoint *writes; /* owned: a record holding only the writes payload, or NULL */
} mem_rec;

typedef struct mem_thread {
    char *id;
    int64_t created, updated;
    sst_value *meta; /* user metadata (object) */
    mem_rec *recs;
    size_t n, cap;
} mem_thread;

typedef struct mem_blob {
    sst_checkpoint *content; /* owned: a record holding the blob (id and content) */
    size_t refs;
} mem_blob;

typedef struct mem_saver {
    pthread_mutex_t mu;
    pthread_cond_t freed; /* a thread lock was released */
    mem_thread **threads; /* protected by mu; NULL slots are deleted threads */
    size_t n_threads, cap_threads;
    sst__strmap index; /* protected by mu: thread id -> slot */
    mem_blob *blobs;
    size_t n_blobs, cap_blobs;
    sst__strmap blob_index; /* protected by mu: blob id -> slot */
    sst__strmap locked;     /* protected by mu: the locked thread ids (owned keys) */
} mem_saver;

static mem_thread *find_thread(const mem_saver *m, const char *id) {
    size_t slot;
    return sst__map_get(&m->index, id, &slot) ? m->threads[slot] : NULL;
}

static mem_thread *add_thread(mem_saver *m, const char *id, int64_t created, sst_error *err) {
    mem_thread *t = sst__calloc(1, sizeof *t);
    if (t == NULL || (t->id = sst__strndup(id, strlen(id))) == NULL ||
        !sst__grow((void **)&m->threads, &m->cap_threads, m->n_threads, sizeof *m->threads, 8) ||
        !sst__map_put(&m->index, t->id, m->n_threads)) {
        if (t != NULL) {
            sst__free(t->id);
        }
        sst__free(t);
        sst__enomem(err);
        return NULL;
    }
    t->created = t->updated = created;
    t->meta = sst_object_empty();
    m->threads[m->n_threads++] = t;
    return t;
}

static mem_blob *find_blob(const mem_saver *m, const char *id) {
    size_t slot;
    return sst__map_get(&m->blob_index, id, &slot) ? &m->blobs[slot] : NULL;
}

/* ---- blobs ---- */

static void blob_release(mem_saver *m, const char *id) {
    mem_blob *b = find_blob(m, id);
    if (b != NULL && b->refs > 0 && --b->refs == 0) {
        sst__map_del(&m->blob_index, b->content->id);
        sst_checkpoint_free(b->content);
        b->content = NULL; /* the slot stays, unindexed */
    }
}

/* SST_ENOTFOUND for a reference (empty content) to a blob not stored. */
static sst_code check_blobs(const mem_saver *m, const sst_checkpoint *r, sst_error *err) {
    for (size_t i = 0; i < r->n_blobs; i++) {
        if (sst__payload_empty(&r->blobs[i].content) && find_blob(m, r->blobs[i].id) == NULL) {
            return sst__error(err, SST_ENOTFOUND,
                              "memory saver: blob %s of checkpoint %s of thread '%s' is not "
                              "stored (send its content); nothing was written",
                              r->blobs[i].id, r->id, r->thread_id);
        }
    }
    return SST_OK;
}

/* Counts the references of @p r to its blobs, storing new ones. */
static sst_code blobs_acquire(mem_saver *m, const sst_checkpoint *r, sst_error *err) {
    for (size_t i = 0; i < r->n_blobs; i++) {
        const sst_blob *b = &r->blobs[i];
        mem_blob *have = find_blob(m, b->id);
        if (have != NULL) {
            have->refs++;
            continue;
        }
        sst_checkpoint holder = {.id = b->id, .body = b->content};
        sst_checkpoint *c = sst_checkpoint_copy(&holder, err);
        if (c == NULL ||
            !sst__grow((void **)&m->blobs, &m->cap_blobs, m->n_blobs, sizeof *m->blobs, 8) ||
            !sst__map_put(&m->blob_index, c->id, m->n_blobs)) {
            sst_checkpoint_free(c);
            for (size_t k = 0; k < i; k++) {
                blob_release(m, r->blobs[k].id);
            }
            return sst__enomem(err);
        }
        m->blobs[m->n_blobs++] = (mem_blob){c, 1};
    }
    return SST_OK;
}

/* ---- writing ---- */

/* The latest record of (thread, ns), or NULL. */
static const mem_rec *head_of(const mem_thread *t, const char *ns) {
    for (size_t i = t != NULL ? t->n : 0; i-- > 0;) {
        if (strcmp(t->recs[i].rec->ns, ns) == 0) {
            return &t->recs[i];
        }
    }
    return NULL;
}

static const mem_rec *find_rec(const mem_thread *t, const char *ns, const char *id) {
    for (size_t i = t != NULL ? t->n : 0; i-- > 0;) {
        const sst_checkpoint *r = t->recs[i].rec;
        if (strcmp(r->id, id) == 0 && (ns == NULL || strcmp(r->ns, ns) == 0)) {
            return &t->recs[i];
        }
    }
    return NULL;
}

/* SST_ECONFLICT unless the record's parent is the latest of its namespace (or a fork). */
static sst_code check_head(const mem_thread *t, const sst_checkpoint *r, sst_error *err) {
    if (find_rec(t, NULL, r->id) != NULL) {
        return sst__error(err, SST_ECONFLICT,
                          "thread '%s' has a checkpoint %s already; nothing was written",
                          r->thread_id, r->id);
    }
    const mem_rec *h = head_of(t, r->ns);
    const char *head = h != NULL ? h->rec->id : NULL;
    if (r->fork || (head == NULL && r->parent_id == NULL) ||
        (head != NULL && r->parent_id != NULL && strcmp(head, r->parent_id) == 0)) {
        return SST_OK;
    }
    return sst__error(err, SST_ECONFLICT,
                      "thread '%s': checkpoint %s follows %s, but the thread's latest checkpoint "
                      "is now %s (another writer committed first); nothing was written",
                      r->thread_id, r->id,
                      r->parent_id != NULL ? r->parent_id : "nothing (a new thread)",
                      head != NULL ? head : "none");
}

/* A copy of @p r to keep: no writes, blobs without their content. */
static sst_checkpoint *keep_copy(const sst_checkpoint *r, sst_error *err) {
    sst_blob small[16];
    sst_blob *refs = r->n_blobs <= 16 ? small : sst__malloc(r->n_blobs * sizeof *refs);
    if (refs == NULL) {
        sst__enomem(err);
        return NULL;
    }
    for (size_t i = 0; i < r->n_blobs; i++) {
        refs[i] = (sst_blob){.id = r->blobs[i].id};
    }
    sst_checkpoint k = *r;
    k.writes = (sst_payload){0};
    k.blobs = refs;
    k.fork = false;
    sst_checkpoint *c = sst_checkpoint_copy(&k, err);
    if (refs != small) {
        sst__free(refs);
    }
    return c;
}

static sst_code mem_put(void *self, const sst_checkpoint *r, bool sync, sst_error *err) {
    SST_UNUSED(sync);
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    mem_thread *t = find_thread(m, r->thread_id);
    sst_code rc = check_head(t, r, err);
    rc = rc == SST_OK ? check_blobs(m, r, err) : rc;
    sst_checkpoint *c = rc == SST_OK ? keep_copy(r, err) : NULL;
    if (c != NULL && t == NULL) {
        t = add_thread(m, r->thread_id, r->created_at, err);
    }
    if (c != NULL &&
        (t == NULL || !sst__grow((void **)&t->recs, &t->cap, t->n, sizeof *t->recs, 8))) {
        rc = t == NULL ? sst__code(err) : sst__enomem(err);
    } else if (c != NULL) {
        rc = blobs_acquire(m, r, err);
    } else if (rc == SST_OK) {
        rc = sst__code(err);
    }
    if (rc == SST_OK) {
        t->recs[t->n++] = (mem_rec){c, NULL};
        t->updated = r->created_at > t->updated ? r->created_at : t->updated;
        c = NULL;
    }
    sst_checkpoint_free(c);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static sst_code mem_put_writes(void *self, const char *thread, const char *ns, const char *id,
                               const sst_payload *writes, sst_thread_status status, bool sync,
                               sst_error *err) {
    SST_UNUSED(sync);
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    mem_rec *r = (mem_rec *)find_rec(find_thread(m, thread), ns, id);
    sst_code rc = SST_OK;
    if (r == NULL) {
        rc = sst__error(err, SST_ENOTFOUND, "memory saver: thread '%s' has no checkpoint %s",
                        thread, id);
    } else {
        sst_checkpoint holder = {.writes = *writes};
        sst_checkpoint *w = sst__payload_empty(writes) ? NULL : sst_checkpoint_copy(&holder, err);
        if (w != NULL || sst__payload_empty(writes)) {
            sst_checkpoint_free(r->writes);
            r->writes = w;
            r->rec->status = status;
        } else {
            rc = sst__code(err);
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* ---- reading ---- */

static sst_code mem_get(void *self, const char *thread, const char *ns, const char *id,
                        sst_checkpoint_fn each, void *user_data, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const mem_thread *t = find_thread(m, thread);
    const mem_rec *r = id != NULL ? find_rec(t, ns, id) : head_of(t, ns);
    sst_code rc = SST_OK;
    if (r == NULL) {
        rc = sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread,
                        id != NULL ? " " : "", id != NULL ? id : "");
    } else {
        sst_checkpoint out = *r->rec;
        sst_blob small[16];
        sst_blob *blobs = out.n_blobs <= 16 ? small : sst__malloc(out.n_blobs * sizeof *blobs);
        if (blobs == NULL) {
            rc = sst__enomem(err);
        } else {
            for (size_t i = 0; i < out.n_blobs; i++) {
                const mem_blob *b = find_blob(m, out.blobs[i].id);
                blobs[i] =
                    (sst_blob){out.blobs[i].id, b != NULL ? b->content->body : (sst_payload){0}};
            }
            out.blobs = blobs;
            out.writes = r->writes != NULL ? r->writes->writes : (sst_payload){0};
            each(&out, user_data);
            if (blobs != small) {
                sst__free(blobs);
            }
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* Calls @p each on a record without body, writes and blobs; false to stop. */
static bool list_one(const sst_checkpoint *rec, sst_checkpoint_fn each, void *user_data) {
    sst_checkpoint h = *rec;
    h.body = (sst_payload){0};
    h.writes = (sst_payload){0};
    h.blobs = NULL;
    h.n_blobs = 0;
    return each(&h, user_data);
}

static sst_code mem_list(void *self, const sst_checkpoint_query *q, sst_checkpoint_fn each,
                         void *user_data, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const mem_thread *t = find_thread(m, q->thread_id);
    size_t start = t != NULL ? t->n : 0;
    if (q->before != NULL) { /* records put before checkpoint @p before; none if it is unknown */
        while (start > 0 && strcmp(t->recs[start - 1].rec->id, q->before) != 0) {
            start--;
        }
        start = start > 0 ? start - 1 : 0;
    }
    size_t sent = 0;
    for (size_t i = start; i-- > 0 && (q->limit == 0 || sent < q->limit);) {
        const sst_checkpoint *r = t->recs[i].rec;
        if (q->ns != NULL && strcmp(r->ns, q->ns) != 0) {
            continue;
        }
        if (q->filter != NULL) {
            sst_value *meta = sst__payload_parse(&r->metadata, 0, err);
            bool match = sst__metadata_matches(meta, q->filter, r->source, r->step);
            sst_value_unref(meta);
            if (!match) {
                continue;
            }
        }
        sent++;
        if (!list_one(r, each, user_data)) {
            break;
        }
    }
    pthread_mutex_unlock(&m->mu);
    return SST_OK;
}

/* ---- threads ---- */

static void thread_info(const mem_saver *m, const mem_thread *t, sst_thread_info *out) {
    const mem_rec *h = head_of(t, "");
    *out = (sst_thread_info){
        .thread_id = t->id,
        .created_at = t->created,
        .updated_at = t->updated,
        .status = sst__map_find(&m->locked, t->id) != SIZE_MAX ? SST_THREAD_BUSY
                  : h != NULL                                  ? h->rec->status
                                                               : SST_THREAD_IDLE,
        .metadata = {.value = t->meta},
        .checkpoints = t->n,
        .latest_id = h != NULL ? h->rec->id : NULL,
        .step = h != NULL ? h->rec->step : 0,
    };
}

static int64_t order_key(const sst_thread_query *q, const sst_thread_info *t) {
    return q->order == SST_THREADS_BY_CREATED ? t->created_at : t->updated_at;
}

static int by_order(const void *a, const void *b, void *query) {
    const sst_thread_info *x = a, *y = b;
    const sst_thread_query *q = query;
    int c = 0;
    if (q->order != SST_THREADS_BY_ID) {
        int64_t kx = order_key(q, x), ky = order_key(q, y);
        c = kx < ky ? -1 : kx > ky;
    }
    if (c == 0) {
        c = strcmp(x->thread_id, y->thread_id);
    }
    return q->descending ? -c : c;
}

static sst_code mem_threads(void *self, const sst_thread_query *q, sst_thread_fn each,
                            void *user_data, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    sst_thread_info *all = sst__malloc((m->n_threads + 1) * sizeof *all);
    size_t n = 0;
    for (size_t i = 0; all != NULL && i < m->n_threads; i++) {
        const mem_thread *t = m->threads[i];
        if (t == NULL) {
            continue;
        }
        thread_info(m, t, &all[n]);
        const sst_value *owner = q->owner != NULL ? sst_object_get(t->meta, "owner") : NULL;
        if ((q->by_status && all[n].status != q->status) ||
            !sst__metadata_matches(t->meta, q->metadata, NULL, 0) ||
            (q->owner != NULL &&
             (!sst_is_string(owner) || strcmp(sst_string_cstr(owner), q->owner) != 0))) {
            continue;
        }
        n++;
    }
    if (all != NULL) {
        qsort_r(all, n, sizeof *all, by_order, (void *)q);
        for (size_t i = q->offset; i < n && (q->limit == 0 || i < q->offset + q->limit); i++) {
            if (!each(&all[i], user_data)) {
                break;
            }
        }
    }
    pthread_mutex_unlock(&m->mu);
    sst__free(all);
    return all != NULL ? SST_OK : sst__enomem(err);
}

static sst_code mem_thread_get(void *self, const char *thread, sst_thread_fn each, void *user_data,
                               sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const mem_thread *t = find_thread(m, thread);
    sst_code rc = SST_OK;
    if (t == NULL) {
        rc = sst__error(err, SST_ENOTFOUND, "memory saver: no thread '%s'", thread);
    } else {
        sst_thread_info info;
        thread_info(m, t, &info);
        each(&info, user_data);
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static sst_code mem_thread_put(void *self, const char *thread, const sst_payload *metadata,
                               sst_error *err) {
    mem_saver *m = self;
    sst_value *meta = sst__payload_parse(metadata, 0, err);
    if (meta == NULL) {
        return sst__code(err);
    }
    pthread_mutex_lock(&m->mu);
    int64_t now = (int64_t)sst__now_ms();
    mem_thread *t = find_thread(m, thread);
    t = t != NULL ? t : add_thread(m, thread, now, err);
    if (t != NULL) {
        sst_value_unref(t->meta);
        t->meta = meta;
        t->updated = now > t->updated ? now : t->updated;
        meta = NULL;
    }
    pthread_mutex_unlock(&m->mu);
    sst_value_unref(meta);
    return t != NULL ? SST_OK : sst__code(err);
}

/* Frees record @p i of @p t and releases its blobs. */
static void drop_rec(mem_saver *m, mem_rec *r) {
    for (size_t k = 0; k < r->rec->n_blobs; k++) {
        blob_release(m, r->rec->blobs[k].id);
    }
    sst_checkpoint_free(r->rec);
    sst_checkpoint_free(r->writes);
}

static void thread_free(mem_saver *m, mem_thread *t) {
    for (size_t i = 0; i < t->n; i++) {
        drop_rec(m, &t->recs[i]);
    }
    sst__free(t->recs);
    sst_value_unref(t->meta);
    sst__free(t->id);
    sst__free(t);
}

static sst_code remove_thread(mem_saver *m, const char *thread) {
    size_t i;
    if (!sst__map_get(&m->index, thread, &i)) {
        return SST_OK;
    }
    sst__map_del(&m->index, thread);
    thread_free(m, m->threads[i]);
    m->threads[i] = NULL;
    return SST_OK;
}

static sst_code mem_delete_thread(void *self, const char *thread, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    SST_UNUSED(err);
    sst_code rc = remove_thread(m, thread);
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static sst_code copy_records(mem_saver *m, const mem_thread *from, mem_thread *to, sst_error *err) {
    to->recs = sst__calloc(from->n + 1, sizeof *to->recs);
    if (to->recs == NULL) {
        return sst__enomem(err);
    }
    to->cap = from->n + 1;
    for (size_t i = 0; i < from->n; i++) {
        sst_checkpoint k = *from->recs[i].rec;
        k.thread_id = to->id;
        mem_rec r = {sst_checkpoint_copy(&k, err), NULL};
        if (r.rec != NULL && from->recs[i].writes != NULL) {
            r.writes = sst_checkpoint_copy(from->recs[i].writes, err);
        }
        if (r.rec == NULL || (from->recs[i].writes != NULL && r.writes == NULL)) {
            sst_checkpoint_free(r.rec);
            return sst__code(err);
        }
        for (size_t b = 0; b < r.rec->n_blobs; b++) {
            find_blob(m, r.rec->blobs[b].id)->refs++;
        }
        to->recs[to->n++] = r;
    }
    return SST_OK;
}

static sst_code mem_copy_thread(void *self, const char *from, const char *to, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const mem_thread *f = find_thread(m, from);
    sst_code rc = SST_OK;
    if (f == NULL) {
        rc = sst__error(err, SST_ENOTFOUND, "memory saver: no thread '%s' to copy", from);
    } else if (find_thread(m, to) != NULL) {
        rc = sst__error(err, SST_ECONFLICT, "memory saver: thread '%s' exists already", to);
    } else {
        mem_thread *t = add_thread(m, to, f->created, err);
        rc = t != NULL ? copy_records(m, f, t, err) : sst__code(err);
        if (t != NULL) {
            sst_value_unref(t->meta);
            t->meta = sst_value_ref(f->meta);
            t->updated = f->updated;
        }
        if (rc != SST_OK && t != NULL) {
            remove_thread(m, to);
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

/* Marks in @p keep the records that must stay: the latest @p n of each namespace and their
 * chains back to a snapshot. */
static void mark_kept(const mem_thread *t, size_t n, bool *keep) {
    enum { MAX_NS = 64 };
    const char *ns[MAX_NS];
    size_t seen[MAX_NS], m = 0;
    for (size_t i = t->n; i-- > 0;) {
        const sst_checkpoint *r = t->recs[i].rec;
        size_t j = 0;
        while (j < m && strcmp(ns[j], r->ns) != 0) {
            j++;
        }
        if (j == m && m < MAX_NS) {
            ns[m] = r->ns;
            seen[m++] = 0;
        }
        keep[i] |= j == MAX_NS || seen[j]++ < n; /* past MAX_NS namespaces: kept */
        if (!keep[i] || r->kind != SST_CHECKPOINT_DELTA || r->parent_id == NULL) {
            continue;
        }
        for (size_t p = i; p-- > 0;) {
            if (strcmp(t->recs[p].rec->id, r->parent_id) == 0) {
                keep[p] = true;
                break;
            }
        }
    }
}

static sst_code mem_prune(void *self, const char *thread, size_t n, size_t *removed,
                          sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    mem_thread *t = find_thread(m, thread);
    bool *keep = t != NULL ? sst__calloc(t->n + 1, sizeof *keep) : NULL;
    if (t != NULL && keep == NULL) {
        pthread_mutex_unlock(&m->mu);
        return sst__enomem(err);
    }
    if (t != NULL) {
        mark_kept(t, n, keep);
    }
    size_t out = 0, gone = 0;
    for (size_t i = 0; t != NULL && i < t->n; i++) {
        if (keep[i]) {
            t->recs[out++] = t->recs[i];
        } else {
            drop_rec(m, &t->recs[i]);
            gone++;
        }
    }
    if (t != NULL) {
        t->n = out;
    }
    pthread_mutex_unlock(&m->mu);
    sst__free(keep);
    if (removed != NULL) {
        *removed = gone;
    }
    return SST_OK;
}

/* ---- locks ---- */

static sst_code mem_lock(void *self, const char *thread, bool wait, sst_error *err) {
    mem_saver *m = self;
    char *key = sst__strndup(thread, strlen(thread)); /* made first: unlocking never allocates */
    if (key == NULL) {
        return sst__enomem(err);
    }
    pthread_mutex_lock(&m->mu);
    size_t ignored;
    while (sst__map_get(&m->locked, thread, &ignored)) {
        if (!wait) {
            pthread_mutex_unlock(&m->mu);
            sst__free(key);
            return sst__error(err, SST_EBUSY, "thread '%s' is busy with another invoke", thread);
        }
        pthread_cond_wait(&m->freed, &m->mu);
    }
    bool ok = sst__map_put(&m->locked, key, 0);
    pthread_mutex_unlock(&m->mu);
    if (!ok) {
        sst__free(key);
        return sst__enomem(err);
    }
    return SST_OK;
}

static void mem_unlock(void *self, const char *thread) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    size_t i = sst__map_find(&m->locked, thread);
    if (i != SIZE_MAX) {
        char *key = (char *)m->locked.keys[i];
        sst__map_del(&m->locked, key);
        sst__free(key);
    }
    pthread_cond_broadcast(&m->freed);
    pthread_mutex_unlock(&m->mu);
}

static void mem_destroy(void *self) {
    mem_saver *m = self;
    for (size_t i = 0; i < m->n_threads; i++) {
        if (m->threads[i] != NULL) {
            thread_free(m, m->threads[i]);
        }
    }
    for (size_t i = 0; i < m->n_blobs; i++) {
        sst_checkpoint_free(m->blobs[i].content);
    }
    sst__free(m->threads);
    sst__free(m->blobs);
    sst__map_free(&m->index);
    sst__map_free(&m->blob_index);
    for (size_t i = 0; i < m->locked.cap; i++) {
        if (m->locked.keys[i] != NULL && m->locked.keys[i] != SST__MAP_TOMB) {
            sst__free((char *)m->locked.keys[i]);
        }
    }
    sst__map_free(&m->locked);
    pthread_cond_destroy(&m->freed);
    pthread_mutex_destroy(&m->mu);
    sst__free(m);
}

sst_checkpointer *sst_memory_saver_new(sst_error *err) {
    SST__ERR_LOCAL(err);
    mem_saver *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->freed, NULL);
    static const sst_checkpointer_ops ops = {
        .size = sizeof(sst_checkpointer_ops),
        .flags = SST_SAVER_VALUES,
        .destroy = mem_destroy,
        .put = mem_put,
        .put_writes = mem_put_writes,
        .get = mem_get,
        .list = mem_list,
        .lock = mem_lock,
        .unlock = mem_unlock,
        .threads = mem_threads,
        .thread_get = mem_thread_get,
        .thread_put = mem_thread_put,
        .copy_thread = mem_copy_thread,
        .delete_thread = mem_delete_thread,
        .prune = mem_prune,
    };
    sst_checkpointer *cp = sst_checkpointer_new(&ops, m, err);
    if (cp == NULL) {
        mem_destroy(m);
    }
    return cp;
}
