/* SPDX-License-Identifier: MIT */
/*
 * A search's order over the in-memory index (store.h, sst_store_ops.search):
 * the items under the prefix, with a query first those with vectors by
 * their best score (LangGraph's max pooling over an item's vectors), then
 * the others; within each group the most recent write first.
 *
 * The candidates go into a binary heap (made in O(n)) and are popped one at
 * a time, so a search pays O(log n) per item it looks at: a backend pops
 * until the filter has accepted offset + limit items, which for a selective
 * filter may be many more than the page, and for none is just the page.
 */
#include <string.h>

#include "store_int.h"

#define RANKED (UINT64_C(1) << 63)

/* True when @p a comes before @p b: ranked first, then higher score, then newer. */
static bool before(const sst__order_entry *a, const sst__order_entry *b) {
    if ((a->key & RANKED) != (b->key & RANKED)) {
        return (a->key & RANKED) != 0;
    }
    if (a->score != b->score) {
        return a->score > b->score;
    }
    return a->key > b->key;
}

static void sift_down(sst__order_entry *h, size_t n, size_t i) {
    for (;;) {
        size_t best = i, l = 2 * i + 1, r = l + 1;
        if (l < n && before(&h[l], &h[best])) {
            best = l;
        }
        if (r < n && before(&h[r], &h[best])) {
            best = r;
        }
        if (best == i) {
            return;
        }
        sst__order_entry t = h[i];
        h[i] = h[best];
        h[best] = t;
        i = best;
    }
}

/*
 * Each item's best score (max over its rows) into @p best; SST_ENOMEM on
 * failure. With @p keep, only the rows of the items kept are scored: their
 * indices are gathered (ascending, so the array is still read forwards) and
 * scored by the same kernel, so each gets the score a full pass gives it.
 */
static sst_code best_scores(const sst__index *ix, const float *query, size_t threads,
                            const uint8_t *keep, float *best, sst_error *err) {
    size_t n = ix->vecs.n;
    const uint32_t *owner = ix->vecs.owner;
    uint32_t *rows = NULL;
    if (keep != NULL) {
        rows = sst__malloc((n > 0 ? n : 1) * sizeof *rows);
        if (rows == NULL) {
            return sst__enomem(err);
        }
        size_t k = 0;
        for (size_t r = 0; r < n; r++) {
            rows[k] = (uint32_t)r;
            k += keep[owner[r]] != SST__KEEP_NO;
        }
        n = k;
    }
    float *dots = sst__malloc((n > 0 ? n : 1) * sizeof *dots);
    if (dots == NULL) {
        sst__free(rows);
        return sst__enomem(err);
    }
    if (rows != NULL) {
        sst__vecs_dots_at(&ix->vecs, rows, n, query, dots, threads);
    } else {
        sst__vecs_dots(&ix->vecs, query, dots, threads);
    }
    for (size_t i = 0; i < ix->n_items; i++) {
        best[i] = -2.0f; /* below any cosine */
    }
    for (size_t i = 0; i < n; i++) {
        uint32_t it = owner[rows != NULL ? rows[i] : i];
        float d = dots[i];
        best[it] = d > best[it] ? d : best[it];
    }
    sst__free(dots);
    sst__free(rows);
    return SST_OK;
}

uint8_t *sst__order_ns_mask(const sst__index *ix, const char *const *prefix, size_t prefix_len) {
    uint8_t *mask = sst__calloc(ix->n_ns > 0 ? ix->n_ns : 1, 1);
    for (size_t i = 0; mask != NULL && i < ix->n_ns; i++) {
        const sst__ixns *n = &ix->ns[i];
        mask[i] = n->items > 0 && sst__index_ns_under(n, prefix, prefix_len);
    }
    return mask;
}

sst_code sst__order_make(const sst__index *ix, const char *const *prefix, size_t prefix_len,
                         const float *query, size_t threads, const uint8_t *keep, sst__order *o,
                         sst_error *err) {
    memset(o, 0, sizeof *o);
    bool rank = query != NULL && ix->dims > 0 && ix->vecs.n > 0;
    uint8_t *mask = sst__order_ns_mask(ix, prefix, prefix_len);
    float *best = rank ? sst__malloc((ix->n_items > 0 ? ix->n_items : 1) * sizeof *best) : NULL;
    o->heap = sst__malloc((ix->live > 0 ? ix->live : 1) * sizeof *o->heap);
    sst_code rc = mask == NULL || o->heap == NULL || (rank && best == NULL) ? sst__enomem(err)
                  : rank ? best_scores(ix, query, threads, keep, best, err)
                         : SST_OK;
    for (size_t i = 0; rc == SST_OK && i < ix->n_items; i++) {
        const sst__ixitem *it = &ix->items[i];
        if (it->mapkey == NULL || !mask[it->ns] || (keep != NULL && keep[i] == SST__KEEP_NO)) {
            continue;
        }
        bool ranked = rank && it->n_rows > 0;
        o->heap[o->n++] = (sst__order_entry){.score = ranked ? best[i] : 0.0f,
                                             .slot = (uint32_t)i,
                                             .key = it->seq | (ranked ? RANKED : 0)};
    }
    for (size_t i = o->n / 2; rc == SST_OK && i-- > 0;) {
        sift_down(o->heap, o->n, i);
    }
    sst__free(mask);
    sst__free(best);
    if (rc != SST_OK) {
        sst__order_free(o);
    }
    return rc;
}

bool sst__order_next(sst__order *o, uint32_t *slot, bool *scored, float *score) {
    if (o->n == 0) {
        return false;
    }
    sst__order_entry top = o->heap[0];
    o->heap[0] = o->heap[--o->n];
    sift_down(o->heap, o->n, 0);
    *slot = top.slot;
    *scored = (top.key & RANKED) != 0;
    *score = top.score;
    return true;
}

void sst__order_free(sst__order *o) {
    sst__free(o->heap);
    memset(o, 0, sizeof *o);
}
