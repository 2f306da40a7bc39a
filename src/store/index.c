/* SPDX-License-Identifier: MIT */
/*
 * The in-memory index both provided backends keep: every item's namespace
 * (interned), key, last write order and vectors, so that a search ranks and
 * orders items without reading their values. The memory backend also keeps
 * the values here; the SQLite backend keeps each item's row id and reads the
 * row only for the items it returns.
 *
 * Writes are two-phase so that a backend can make its durable write between
 * them: sst__index_prepare allocates everything a write needs (it may fail,
 * changing nothing visible), sst__index_commit applies it and cannot fail.
 * Removal never allocates. The caller serialises writers (the backends hold
 * their write lock); readers may read concurrently with each other.
 */
#include <stdio.h>
#include <string.h>

#include "store_int.h"

void sst__index_init(sst__index *ix, size_t dims) {
    memset(ix, 0, sizeof *ix);
    ix->dims = dims;
    ix->vecs.dims = dims;
    ix->ns_free = ix->item_free = SST__IX_NONE;
}

static void ns_free_parts(sst__ixns *n) {
    sst__free(n->joined);
    sst__free(n->buf);
    sst__free(n->labels);
    n->joined = n->buf = NULL;
    n->labels = NULL;
}

void sst__index_free(sst__index *ix) {
    for (size_t i = 0; i < ix->n_items; i++) {
        sst__free(ix->items[i].mapkey);
        sst__free(ix->items[i].rows);
        sst_value_unref(ix->items[i].value);
    }
    for (size_t i = 0; i < ix->n_ns; i++) {
        ns_free_parts(&ix->ns[i]);
    }
    sst__free(ix->items);
    sst__free(ix->ns);
    sst__map_free(&ix->ns_map);
    sst__map_free(&ix->item_map);
    sst__vecs_free(&ix->vecs);
}

void sst__index_clear(sst__index *ix) {
    size_t dims = ix->dims;
    sst__index_free(ix);
    sst__index_init(ix, dims);
}

/* "<len of joined>:" + joined + key, in @p buf when it fits, else allocated. */
static char *mapkey_make(const char *const *ns, size_t ns_len, const char *key, char *buf,
                         size_t cap, size_t *key_at) {
    size_t jlen = ns_len > 0 ? ns_len - 1 : 0;
    for (size_t i = 0; i < ns_len; i++) {
        jlen += strlen(ns[i]);
    }
    char head[24];
    int hn = snprintf(head, sizeof head, "%zu:", jlen);
    size_t klen = strlen(key);
    size_t total = (size_t)hn + jlen + klen + 1;
    char *s = total <= cap ? buf : sst__malloc(total);
    if (s == NULL) {
        return NULL;
    }
    memcpy(s, head, (size_t)hn);
    size_t at = (size_t)hn;
    for (size_t i = 0; i < ns_len; i++) {
        if (i > 0) {
            s[at++] = '.';
        }
        size_t l = strlen(ns[i]);
        memcpy(s + at, ns[i], l);
        at += l;
    }
    memcpy(s + at, key, klen + 1);
    if (key_at != NULL) {
        *key_at = at;
    }
    return s;
}

sst_code sst__index_lookup(const sst__index *ix, const char *const *ns, size_t ns_len,
                           const char *key, uint32_t *slot, sst_error *err) {
    char buf[512];
    char *mk = mapkey_make(ns, ns_len, key, buf, sizeof buf, NULL);
    if (mk == NULL) {
        return sst__enomem(err);
    }
    size_t v;
    *slot = sst__map_get(&ix->item_map, mk, &v) ? (uint32_t)v : SST__IX_NONE;
    if (mk != buf) {
        sst__free(mk);
    }
    return SST_OK;
}

/* The parts of a new namespace entry (joined, labels) into @p p. */
static bool ns_parts(sst__ixput *p, const char *const *ns, size_t ns_len) {
    p->joined = sst__ns_join(ns, ns_len);
    size_t len = p->joined != NULL ? strlen(p->joined) + 1 : 0;
    p->buf = p->joined != NULL ? sst__malloc(len) : NULL;
    p->labels = sst__malloc(ns_len * sizeof *p->labels);
    if (p->buf == NULL || p->labels == NULL) {
        return false;
    }
    memcpy(p->buf, p->joined, len);
    char *at = p->buf;
    for (size_t i = 0; i < ns_len; i++) {
        p->labels[i] = at;
        at += strlen(ns[i]);
        *at++ = '\0';
    }
    p->ns_len = ns_len;
    return true;
}

/* Makes the namespace part of a new item's write ready. */
static bool prepare_ns(sst__index *ix, const char *const *ns, size_t ns_len, sst__ixput *p) {
    char *joined = sst__ns_join(ns, ns_len);
    if (joined == NULL) {
        return false;
    }
    size_t v;
    bool found = sst__map_get(&ix->ns_map, joined, &v);
    sst__free(joined);
    if (found) {
        p->ns = (uint32_t)v;
        return true;
    }
    p->new_ns = true;
    if (!ns_parts(p, ns, ns_len) || !sst__map_reserve(&ix->ns_map, 1)) {
        return false;
    }
    if (ix->ns_free != SST__IX_NONE) {
        p->ns = ix->ns_free;
        return true;
    }
    if (ix->n_ns == ix->cap_ns &&
        !sst__grow((void **)&ix->ns, &ix->cap_ns, ix->n_ns, sizeof *ix->ns, 16)) {
        return false;
    }
    p->ns = (uint32_t)ix->n_ns;
    return true;
}

/* Makes a new item's slot, map key and rows ready. */
static bool prepare_item(sst__index *ix, const char *const *ns, size_t ns_len, const char *key,
                         sst__ixput *p) {
    p->mapkey = mapkey_make(ns, ns_len, key, NULL, 0, &p->key_at);
    p->rows = sst__malloc((p->n_vectors > 0 ? p->n_vectors : 1) * sizeof *p->rows);
    if (p->mapkey == NULL || p->rows == NULL || !sst__map_reserve(&ix->item_map, 1)) {
        return false;
    }
    if (ix->item_free != SST__IX_NONE) {
        p->slot = ix->item_free;
        return true;
    }
    if (ix->n_items >= UINT32_MAX - 1) {
        return false;
    }
    if (ix->n_items == ix->cap_items &&
        !sst__grow((void **)&ix->items, &ix->cap_items, ix->n_items, sizeof *ix->items, 64)) {
        return false;
    }
    p->slot = (uint32_t)ix->n_items;
    return true;
}

sst_code sst__index_prepare(sst__index *ix, const char *const *ns, size_t ns_len, const char *key,
                            size_t n_vectors, sst__ixput *p, sst_error *err) {
    memset(p, 0, sizeof *p);
    n_vectors = ix->dims > 0 ? n_vectors : 0;
    p->n_vectors = n_vectors;
    uint32_t slot;
    if (sst__index_lookup(ix, ns, ns_len, key, &slot, err) != SST_OK) {
        return SST_ENOMEM;
    }
    bool ok = sst__vecs_reserve(&ix->vecs, n_vectors);
    if (ok && slot != SST__IX_NONE) {
        sst__ixitem *it = &ix->items[slot];
        p->existing = true;
        p->slot = slot;
        p->ns = it->ns;
        if (it->cap_rows < n_vectors) {
            uint32_t *rows = sst__realloc(it->rows, n_vectors * sizeof *rows);
            ok = rows != NULL;
            it->rows = ok ? rows : it->rows;
            it->cap_rows = ok ? (uint32_t)n_vectors : it->cap_rows;
        }
    } else if (ok) {
        ok = prepare_ns(ix, ns, ns_len, p) && prepare_item(ix, ns, ns_len, key, p);
    }
    if (!ok) {
        sst__index_abort(ix, p);
        return sst__enomem(err);
    }
    return SST_OK;
}

void sst__index_abort(sst__index *ix, const sst__ixput *p) {
    (void)ix;
    sst__free(p->joined);
    sst__free(p->buf);
    sst__free(p->labels);
    sst__free(p->mapkey);
    sst__free(p->rows);
}

/* Removes the vector rows of item @p it (highest first, so a moved row is never its own). */
static void drop_rows(sst__index *ix, sst__ixitem *it) {
    for (uint32_t i = 1; i < it->n_rows; i++) { /* sort descending: lists are short */
        for (uint32_t j = i; j > 0 && it->rows[j - 1] < it->rows[j]; j--) {
            uint32_t t = it->rows[j];
            it->rows[j] = it->rows[j - 1];
            it->rows[j - 1] = t;
        }
    }
    for (uint32_t i = 0; i < it->n_rows; i++) {
        size_t r = it->rows[i], last = ix->vecs.n - 1;
        if (r != last) {
            sst__ixitem *mover = &ix->items[ix->vecs.owner[last]];
            for (uint32_t k = 0; k < mover->n_rows; k++) {
                if (mover->rows[k] == last) {
                    mover->rows[k] = (uint32_t)r;
                    break;
                }
            }
        }
        sst__vecs_remove(&ix->vecs, r);
    }
    it->n_rows = 0;
}

/* Takes the prepared namespace slot (a new one) or the existing one; counts the item. */
static void commit_ns(sst__index *ix, const sst__ixput *p) {
    sst__ixns *n = &ix->ns[p->ns];
    if (p->new_ns) {
        if (p->ns == ix->ns_free) {
            ix->ns_free = n->next;
        } else {
            ix->n_ns++;
        }
        *n = (sst__ixns){.joined = p->joined, .buf = p->buf, .labels = p->labels, .len = p->ns_len};
        bool put = sst__map_put(&ix->ns_map, n->joined, p->ns);
        SST_ASSERT(put);
        (void)put;
    }
    n->items++;
}

uint32_t sst__index_commit(sst__index *ix, const sst__ixput *p, const float *vectors,
                           uint64_t seq) {
    sst__ixitem *it = &ix->items[p->slot];
    if (p->existing) {
        drop_rows(ix, it);
    } else {
        commit_ns(ix, p);
        if (p->slot == ix->item_free) {
            ix->item_free = it->next;
        } else {
            ix->n_items++;
        }
        *it = (sst__ixitem){.mapkey = p->mapkey,
                            .key = p->mapkey + p->key_at,
                            .ns = p->ns,
                            .rows = p->rows,
                            .cap_rows = (uint32_t)(p->n_vectors > 0 ? p->n_vectors : 1)};
        bool put = sst__map_put(&ix->item_map, it->mapkey, p->slot);
        SST_ASSERT(put);
        (void)put;
        ix->live++;
    }
    for (size_t i = 0; i < p->n_vectors; i++) {
        it->rows[i] = (uint32_t)sst__vecs_push(&ix->vecs, vectors + i * ix->dims, p->slot);
    }
    it->n_rows = (uint32_t)p->n_vectors;
    it->seq = seq;
    if (seq > ix->seq) {
        ix->seq = seq;
    }
    return p->slot;
}

void sst__index_remove(sst__index *ix, uint32_t slot) {
    sst__ixitem *it = &ix->items[slot];
    SST_ASSERT(it->mapkey != NULL);
    drop_rows(ix, it);
    sst__map_del(&ix->item_map, it->mapkey);
    sst__ixns *n = &ix->ns[it->ns];
    if (--n->items == 0) {
        sst__map_del(&ix->ns_map, n->joined);
        ns_free_parts(n);
        n->next = ix->ns_free;
        ix->ns_free = it->ns;
    }
    sst__free(it->mapkey);
    sst__free(it->rows);
    sst_value_unref(it->value);
    *it = (sst__ixitem){.next = ix->item_free};
    ix->item_free = slot;
    ix->live--;
}

bool sst__index_ns_under(const sst__ixns *ns, const char *const *prefix, size_t prefix_len) {
    if (ns->len < prefix_len) {
        return false;
    }
    for (size_t i = 0; i < prefix_len; i++) {
        if (strcmp(ns->labels[i], prefix[i]) != 0) {
            return false;
        }
    }
    return true;
}
