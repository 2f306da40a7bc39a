/* SPDX-License-Identifier: MIT */
/*
 * The in-memory saver: per thread, its records in creation order and the
 * writes of its checkpoints, all as values. A mutex guards every call; a
 * condition variable lets a waiting invoke sleep until a thread is free.
 */
#include <pthread.h>
#include <string.h>

#include "checkpoint_int.h"
#include "values/build.h"

typedef struct mem_saver {
    pthread_mutex_t mu;
    pthread_cond_t freed; /* a thread lock was released */
    sst_value *threads;   /* protected by mu: {thread: {"records": [...], "writes": {id: w}}} */
    sst_value *locked;    /* protected by mu: {thread: true} */
} mem_saver;

static int by_key(const void *a, const void *b) {
    const sst_value *ka = *(const sst_value *const *)a, *kb = *(const sst_value *const *)b;
    return strcmp(sst_string_cstr(ka), sst_string_cstr(kb));
}

static sst_value *mem_threads(void *self, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    size_t n = sst_object_len(m->threads);
    const sst_value **keys = sst__malloc((n ? n : 1) * sizeof *keys);
    sst_value *out = keys != NULL ? sst_array_empty() : NULL;
    for (size_t i = 0; i < n && keys != NULL; i++) {
        keys[i] = sst_object_key_at(m->threads, i);
    }
    if (keys != NULL) {
        qsort(keys, n, sizeof *keys, by_key);
    }
    for (size_t i = 0; i < n && out != NULL; i++) {
        const sst_value *records =
            sst_object_get(sst_object_get(m->threads, sst_string_cstr(keys[i])), "records");
        const sst_value *last = sst_array_get(records, sst_array_len(records) - 1);
        sst_value *t = sst__set_take(sst_object_empty(), "thread_id", sst_value_ref(keys[i]), err);
        t = sst__set_take(t, "checkpoints", sst_int_new((int64_t)sst_array_len(records), err), err);
        t = sst__set_take(t, "latest", sst_value_ref(sst_object_get(last, "id")), err);
        t = sst__set_take(t, "step", sst_value_ref(sst_object_get(last, "step")), err);
        out = t != NULL ? sst_array_push_take(out, t, err) : (sst_value_unref(out), NULL);
    }
    pthread_mutex_unlock(&m->mu);
    sst__free(keys);
    if (out == NULL && err != NULL && err->code == SST_OK) {
        sst__enomem(err);
    }
    return out;
}

static const sst_value *thread_of(const mem_saver *m, const char *thread) {
    return sst_object_get(m->threads, thread);
}

/* SST_ECONFLICT unless the record's parent is the thread's latest checkpoint (or a fork). */
static sst_code check_head(const sst_value *t, const sst_value *record, sst_error *err) {
    if (sst_bool_value(sst_object_get(record, "fork"))) {
        return SST_OK;
    }
    const sst_value *records = sst_object_get(t, "records");
    size_t n = sst_array_len(records);
    const sst_value *head = n > 0 ? sst_object_get(sst_array_get(records, n - 1), "id") : NULL;
    const sst_value *parent = sst_object_get(record, "parent");
    if (!sst_is_string(parent)) {
        parent = NULL;
    }
    if (head == NULL && parent == NULL) {
        return SST_OK;
    }
    if (head != NULL && parent != NULL && sst_value_equal(head, parent)) {
        return SST_OK;
    }
    return sst__error(err, SST_ECONFLICT,
                      "thread '%s': checkpoint %s follows %s, but the thread's latest checkpoint "
                      "is now %s (another writer committed first); nothing was written",
                      sst_string_cstr(sst_object_get(record, "thread")),
                      sst_string_cstr(sst_object_get(record, "id")),
                      parent != NULL ? sst_string_cstr(parent) : "nothing (a new thread)",
                      head != NULL ? sst_string_cstr(head) : "none");
}

static sst_code mem_put(void *self, const sst_value *record, bool sync, sst_error *err) {
    SST_UNUSED(sync);
    mem_saver *m = self;
    const char *thread = sst_string_cstr(sst_object_get(record, "thread"));
    pthread_mutex_lock(&m->mu);
    const sst_value *t = thread_of(m, thread);
    sst_code fenced = check_head(t, record, err);
    if (fenced != SST_OK) {
        pthread_mutex_unlock(&m->mu);
        return fenced;
    }
    sst_value *entry = t != NULL ? sst_value_ref(t) : NULL;
    if (entry == NULL) {
        entry = sst_object_set_take(sst_object_empty(), "records", sst_array_empty(), err);
        entry =
            entry != NULL ? sst_object_set_take(entry, "writes", sst_object_empty(), err) : NULL;
    }
    sst_value *records = entry != NULL ? sst_value_ref(sst_object_get(entry, "records")) : NULL;
    records = records != NULL ? sst_array_push_take(records, sst_value_ref(record), err) : NULL;
    entry = entry != NULL && records != NULL
                ? sst_object_set_take(entry, "records", records, err)
                : (sst_value_unref(entry), sst_value_unref(records), NULL);
    sst_code rc = SST_ENOMEM;
    if (entry != NULL) {
        m->threads = sst_object_set_take(m->threads, thread, entry, err);
        rc = m->threads != NULL ? SST_OK : SST_ENOMEM;
        if (m->threads == NULL) {
            m->threads = sst_object_empty(); /* out of memory: the store is lost, not corrupt */
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc == SST_OK ? rc : sst__enomem(err);
}

static sst_code mem_put_writes(void *self, const char *thread, const char *id,
                               const sst_value *writes, bool sync, sst_error *err) {
    SST_UNUSED(sync);
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const sst_value *t = thread_of(m, thread);
    sst_code rc = SST_OK;
    if (t == NULL) {
        rc = sst__error(err, SST_ENOTFOUND, "memory saver: no thread '%s'", thread);
    } else {
        sst_value *w = sst_value_ref(sst_object_get(t, "writes"));
        w = writes != NULL && !sst_is_null(writes)
                ? sst_object_set_take(w, id, sst_value_ref(writes), err)
                : sst_object_remove_take(w, id, err);
        sst_value *entry =
            w != NULL ? sst_object_set_take(sst_value_ref(t), "writes", w, err) : NULL;
        m->threads =
            entry != NULL ? sst_object_set_take(m->threads, thread, entry, err) : m->threads;
        rc = entry != NULL && m->threads != NULL ? SST_OK : sst__enomem(err);
        if (m->threads == NULL) {
            m->threads = sst_object_empty();
        }
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static sst_value *mem_get(void *self, const char *thread, const char *id, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const sst_value *t = thread_of(m, thread);
    const sst_value *records = sst_object_get(t, "records");
    const sst_value *found = NULL;
    for (size_t i = sst_array_len(records); i-- > 0 && found == NULL;) {
        const sst_value *r = sst_array_get(records, i);
        if (id == NULL || strcmp(sst_string_cstr(sst_object_get(r, "id")), id) == 0) {
            found = r;
        }
    }
    sst_value *out = NULL;
    if (found == NULL) {
        sst__error(err, SST_ENOTFOUND, "thread '%s' has no checkpoint%s%s", thread,
                   id != NULL ? " " : "", id != NULL ? id : "");
    } else {
        const sst_value *w = sst_object_get(sst_object_get(t, "writes"),
                                            sst_string_cstr(sst_object_get(found, "id")));
        out = sst_object_set_take(sst_value_ref(found), "writes",
                                  sst_value_ref(w != NULL ? w : sst_null()), err);
    }
    pthread_mutex_unlock(&m->mu);
    return out;
}

static sst_value *mem_list_before(void *self, const char *thread, const sst_value *filter,
                                  const char *before, size_t limit, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    const sst_value *records = sst_object_get(thread_of(m, thread), "records");
    sst_value *out = sst_array_empty();
    size_t start = sst_array_len(records);
    if (before != NULL) { /* records older than checkpoint @p before; none if it is unknown */
        while (start > 0 &&
               strcmp(sst_string_cstr(sst_object_get(sst_array_get(records, start - 1), "id")),
                      before) != 0) {
            start--;
        }
        start = start > 0 ? start - 1 : 0;
    }
    for (size_t i = start; i-- > 0 && out != NULL;) {
        if (limit > 0 && sst_array_len(out) >= limit) {
            break;
        }
        const sst_value *r = sst_array_get(records, i);
        if (!sst__metadata_matches(sst_object_get(r, "metadata"), filter)) {
            continue;
        }
        sst_value *h = sst__record_header(r, err);
        out = h != NULL ? sst_array_push_take(out, h, err) : (sst_value_unref(out), NULL);
    }
    pthread_mutex_unlock(&m->mu);
    return out;
}

static sst_value *mem_list(void *self, const char *thread, const sst_value *filter, size_t limit,
                           sst_error *err) {
    return mem_list_before(self, thread, filter, NULL, limit, err);
}

static sst_code mem_delete_thread(void *self, const char *thread, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    m->threads = sst_object_remove_take(m->threads, thread, err);
    sst_code rc = m->threads != NULL ? SST_OK : SST_ENOMEM;
    if (m->threads == NULL) {
        m->threads = sst_object_empty();
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static sst_code mem_lock(void *self, const char *thread, bool wait, sst_error *err) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    while (sst_object_get(m->locked, thread) != NULL) {
        if (!wait) {
            pthread_mutex_unlock(&m->mu);
            return sst__error(err, SST_EBUSY, "thread '%s' is busy with another invoke", thread);
        }
        pthread_cond_wait(&m->freed, &m->mu);
    }
    m->locked = sst_object_set_take(m->locked, thread, sst_bool(true), err);
    sst_code rc = m->locked != NULL ? SST_OK : SST_ENOMEM;
    if (m->locked == NULL) {
        m->locked = sst_object_empty();
    }
    pthread_mutex_unlock(&m->mu);
    return rc;
}

static void mem_unlock(void *self, const char *thread) {
    mem_saver *m = self;
    pthread_mutex_lock(&m->mu);
    sst_value *l = sst_object_remove_take(m->locked, thread, NULL);
    m->locked = l != NULL ? l : sst_object_empty();
    pthread_cond_broadcast(&m->freed);
    pthread_mutex_unlock(&m->mu);
}

static void mem_destroy(void *self) {
    mem_saver *m = self;
    sst_value_unref(m->threads);
    sst_value_unref(m->locked);
    pthread_cond_destroy(&m->freed);
    pthread_mutex_destroy(&m->mu);
    sst__free(m);
}

sst_checkpointer *sst_memory_saver_new(sst_error *err) {
    mem_saver *m = sst__calloc(1, sizeof *m);
    if (m == NULL) {
        sst__enomem(err);
        return NULL;
    }
    pthread_mutex_init(&m->mu, NULL);
    pthread_cond_init(&m->freed, NULL);
    m->threads = sst_object_empty();
    m->locked = sst_object_empty();
    static const sst_checkpointer_ops ops = {
        .put = mem_put,
        .put_writes = mem_put_writes,
        .get = mem_get,
        .list = mem_list,
        .delete_thread = mem_delete_thread,
        .lock = mem_lock,
        .unlock = mem_unlock,
        .destroy = mem_destroy,
        .threads = mem_threads,
        .list_before = mem_list_before,
    };
    sst_checkpointer *cp = sst_checkpointer_new(&ops, m, err);
    if (cp == NULL) {
        mem_destroy(m);
    }
    return cp;
}
