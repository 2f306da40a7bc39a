/* SPDX-License-Identifier: MIT */
/* A string-keyed table of slot numbers (common.h describes it). */
#include <string.h>

#include "common.h"
/*
 * A string-keyed table of slot numbers (open addressing, linear probing).
 * Keys are borrowed from the entries they index. Insertion never loses the
 * table: growing allocates a new array before the old one is freed.
 */

const char SST__MAP_TOMB[1];

size_t sst__map_find(const sst__strmap *m, const char *key) {
    if (m->cap == 0) {
        return SIZE_MAX;
    }
    size_t mask = m->cap - 1;
    for (size_t i = sst__hash_bytes(key, strlen(key), 0) & mask;; i = (i + 1) & mask) {
        if (m->keys[i] == NULL) {
            return SIZE_MAX;
        }
        if (m->keys[i] != SST__MAP_TOMB && strcmp(m->keys[i], key) == 0) {
            return i;
        }
    }
}

bool sst__map_get(const sst__strmap *m, const char *key, size_t *val) {
    size_t i = sst__map_find(m, key);
    if (i != SIZE_MAX) {
        *val = m->vals[i];
    }
    return i != SIZE_MAX;
}

static void sst__map_place(sst__strmap *m, const char *key, size_t val) {
    size_t mask = m->cap - 1;
    size_t i = sst__hash_bytes(key, strlen(key), 0) & mask;
    while (m->keys[i] != NULL && m->keys[i] != SST__MAP_TOMB) {
        i = (i + 1) & mask;
    }
    m->keys[i] = key;
    m->vals[i] = val;
    m->used++;
    m->live++;
}

/* Rebuilds the table (no deleted slots) when @p extra more keys would pass 70 %. */
bool sst__map_reserve(sst__strmap *m, size_t extra) {
    if ((m->used + extra) * 10 >= m->cap * 7) { /* rebuild: at most half full after */
        size_t cap = 16;
        while ((m->live + extra) * 2 >= cap) {
            cap *= 2;
        }
        sst__strmap g = {sst__calloc(cap, sizeof *g.keys), sst__calloc(cap, sizeof *g.vals), cap, 0,
                         0};
        if (g.keys == NULL || g.vals == NULL) {
            sst__free(g.keys);
            sst__free(g.vals);
            return false;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->keys[i] != NULL && m->keys[i] != SST__MAP_TOMB) {
                sst__map_place(&g, m->keys[i], m->vals[i]);
            }
        }
        sst__free(m->keys);
        sst__free(m->vals);
        *m = g;
    }
    return true;
}

bool sst__map_put(sst__strmap *m, const char *key, size_t val) {
    if (!sst__map_reserve(m, 1)) {
        return false;
    }
    sst__map_place(m, key, val);
    return true;
}

void sst__map_del(sst__strmap *m, const char *key) {
    size_t i = sst__map_find(m, key);
    if (i != SIZE_MAX) {
        m->keys[i] = SST__MAP_TOMB; /* counted in used until the next rebuild */
        m->live--;
    }
}

void sst__map_free(sst__strmap *m) {
    sst__free(m->keys);
    sst__free(m->vals);
}
