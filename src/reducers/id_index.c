/* SPDX-License-Identifier: MIT */
/*
 * The message-id index that makes add_messages O(update) instead of
 * O(history): a hash map id -> position attached to each message list it
 * built (sst_array_attach), and handed on to the next version.
 *
 * Versions of one history share one index that only grows: a version made
 * by appending adds its new ids, and older versions keep using the same
 * table. That is safe because every lookup is checked against the list it
 * is for (the position must hold that id); an id the table does not know is
 * in no list that carries the table, since every version carrying it got
 * its ids inserted. A failed check (two branches put one id at different
 * positions) falls back to a scan. A mutex guards the table: workers may
 * merge into the same snapshot at once (routers see state + own update).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "reducers_int.h"

typedef struct slot {
    uint64_t hash;
    sst_value *id; /* owned string, NULL: empty */
    size_t pos;
} slot;

struct sst__id_index {
    atomic_size_t rc;
    pthread_mutex_t mu; /* protects slots, cap, count */
    slot *slots;
    size_t cap; /* power of two */
    size_t count;
};

static void index_ref(void *data) {
    atomic_fetch_add_explicit(&((sst__id_index *)data)->rc, 1, memory_order_relaxed);
}

static void index_unref(void *data) {
    sst__id_index *x = data;
    if (x == NULL || atomic_fetch_sub_explicit(&x->rc, 1, memory_order_acq_rel) != 1) {
        return;
    }
    for (size_t i = 0; i < x->cap; i++) {
        sst_value_unref(x->slots[i].id);
    }
    sst__free(x->slots);
    pthread_mutex_destroy(&x->mu);
    sst__free(x);
}

const sst_attachment_type sst__id_index_type = {index_ref, index_unref};

void sst__id_index_unref(sst__id_index *x) {
    index_unref(x);
}

static uint64_t id_hash(const sst_value *id) {
    return sst__hash_bytes(sst_string_cstr(id), sst_string_len(id), 0x6d736769);
}

/* Inserts or updates under the lock; false on OOM. */
static bool put_locked(sst__id_index *x, const sst_value *id, uint64_t h, size_t pos) {
    if ((x->count + 1) * 2 > x->cap) {
        size_t cap = x->cap ? x->cap * 2 : 64;
        slot *s = sst__calloc(cap, sizeof *s);
        if (s == NULL) {
            return false;
        }
        for (size_t i = 0; i < x->cap; i++) {
            if (x->slots[i].id != NULL) {
                size_t j = (size_t)x->slots[i].hash & (cap - 1);
                while (s[j].id != NULL) {
                    j = (j + 1) & (cap - 1);
                }
                s[j] = x->slots[i];
            }
        }
        sst__free(x->slots);
        x->slots = s;
        x->cap = cap;
    }
    size_t i = (size_t)h & (x->cap - 1);
    while (x->slots[i].id != NULL) {
        if (x->slots[i].hash == h && sst_value_equal(x->slots[i].id, id)) {
            x->slots[i].pos = pos;
            return true;
        }
        i = (i + 1) & (x->cap - 1);
    }
    x->slots[i].hash = h;
    x->slots[i].id = sst_value_ref(id);
    x->slots[i].pos = pos;
    x->count++;
    return true;
}

bool sst__id_index_put(sst__id_index *x, const sst_value *id, size_t pos) {
    pthread_mutex_lock(&x->mu);
    bool ok = put_locked(x, id, id_hash(id), pos);
    pthread_mutex_unlock(&x->mu);
    return ok;
}

sst__id_index *sst__id_index_build(const sst_value *list) {
    sst__id_index *x = sst__calloc(1, sizeof *x);
    if (x == NULL) {
        return NULL;
    }
    atomic_init(&x->rc, 1);
    pthread_mutex_init(&x->mu, NULL);
    sst_array_iter it;
    sst_array_iter_init(&it, list);
    const sst_value *m;
    for (size_t pos = 0; (m = sst_array_iter_next(&it)) != NULL; pos++) {
        const sst_value *id = sst_object_get(m, "id");
        if (sst_is_string(id) && !put_locked(x, id, id_hash(id), pos)) {
            index_unref(x);
            return NULL;
        }
    }
    return x;
}

sst__id_index *sst__id_index_of(const sst_value *list) {
    sst__id_index *x = sst_array_attachment(list, &sst__id_index_type);
    if (x != NULL) {
        index_ref(x);
    }
    return x;
}

/* The position of @p id by scanning (the slow path). */
static size_t scan(const sst_value *list, const sst_value *id) {
    sst_array_iter it;
    sst_array_iter_init(&it, list);
    const sst_value *m;
    for (size_t pos = 0; (m = sst_array_iter_next(&it)) != NULL; pos++) {
        if (sst_value_equal(sst_object_get(m, "id"), id)) {
            return pos;
        }
    }
    return SIZE_MAX;
}

size_t sst__id_index_find(sst__id_index *x, const sst_value *list, const sst_value *id) {
    uint64_t h = id_hash(id);
    size_t pos = SIZE_MAX;
    bool known = false;
    pthread_mutex_lock(&x->mu);
    for (size_t i = x->cap ? (size_t)h & (x->cap - 1) : 0; x->cap > 0 && x->slots[i].id != NULL;
         i = (i + 1) & (x->cap - 1)) {
        if (x->slots[i].hash == h && sst_value_equal(x->slots[i].id, id)) {
            pos = x->slots[i].pos;
            known = true;
            break;
        }
    }
    pthread_mutex_unlock(&x->mu);
    if (!known) {
        return SIZE_MAX;
    }
    if (pos < sst_array_len(list) &&
        sst_value_equal(sst_object_get(sst_array_get(list, pos), "id"), id)) {
        return pos;
    }
    return scan(list, id); /* another branch moved it: look it up the slow way */
}
