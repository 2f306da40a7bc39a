/* SPDX-License-Identifier: MIT */
/*
 * Embedding through the hook (store.h, sst_embed_fn): the texts at an item's
 * field paths, deduplicated (LangGraph embeds each distinct text of a put
 * once), become unit vectors; a query text becomes one. The hook runs
 * without any store lock held. Its failure keeps its code and message.
 */
#include <math.h>
#include <string.h>

#include "store_int.h"

/* Calls the hook for @p n texts into @p out (n * dims floats) and normalises the rows. */
static sst_code call_hook(sst_store *st, const char *what, const char *const *texts, size_t n,
                          float *out, sst_error *err) {
    size_t total = n * st->dims;
    for (size_t i = 0; i < total; i++) {
        out[i] = NAN; /* a row the hook leaves unfilled is caught below */
    }
    sst_error e;
    sst_error_clear(&e);
    sst_code rc = st->embed(st->embed_user_data, texts, n, st->dims, out, &e);
    if (rc != SST_OK) {
        if (rc <= SST_OK || rc >= SST_CODE_COUNT) {
            rc = SST_EIO;
        }
        return sst__error(err, rc, "%s: embed hook: %s", what,
                          e.msg[0] != '\0' ? e.msg : sst_strerror(rc));
    }
    for (size_t i = 0; i < n; i++) {
        float *row = out + i * st->dims;
        if (!sst__vec_finite(row, st->dims)) {
            return sst__error(err, SST_ERANGE,
                              "%s: embed hook: vector %zu of %zu (for \"%.40s\") has a "
                              "non-finite number or was not filled",
                              what, i, n, texts[i]);
        }
        sst__vec_normalize(row, st->dims);
    }
    return SST_OK;
}

/* The distinct texts at @p paths, in order of first appearance. */
static sst_code gather(const sst_value *value, const sst__path *paths, size_t n_paths,
                       sst__texts *out, sst_error *err) {
    sst__strmap seen = {0};
    sst_code rc = SST_OK;
    for (size_t p = 0; rc == SST_OK && p < n_paths; p++) {
        sst__texts found = {0};
        rc = sst__path_texts(value, &paths[p], &found, err);
        for (size_t i = 0; rc == SST_OK && i < found.n; i++) {
            if (sst__map_find(&seen, found.s[i]) != SIZE_MAX) {
                continue;
            }
            if (out->n == out->cap &&
                !sst__grow((void **)&out->s, &out->cap, out->n, sizeof *out->s, 8)) {
                rc = sst__enomem(err);
                break;
            }
            if (!sst__map_put(&seen, found.s[i], out->n)) {
                rc = sst__enomem(err);
                break;
            }
            out->s[out->n++] = found.s[i]; /* moved */
            found.s[i] = NULL;
        }
        sst__texts_free(&found); /* sst__free(NULL) for the moved ones */
    }
    sst__map_free(&seen);
    return rc;
}

sst_code sst__embed_value(sst_store *st, const sst_value *value, const sst__path *paths,
                          size_t n_paths, float **vectors, size_t *n, sst_error *err) {
    *vectors = NULL;
    *n = 0;
    sst__texts texts = {0};
    sst_code rc = gather(value, paths, n_paths, &texts, err);
    if (rc == SST_OK && texts.n > 0) {
        float *out = texts.n <= SIZE_MAX / sizeof(float) / st->dims
                         ? sst__malloc(texts.n * st->dims * sizeof(float))
                         : NULL;
        rc = out == NULL
                 ? sst__enomem(err)
                 : call_hook(st, "store put", (const char *const *)texts.s, texts.n, out, err);
        if (rc == SST_OK) {
            *vectors = out;
            *n = texts.n;
        } else {
            sst__free(out);
        }
    }
    sst__texts_free(&texts);
    return rc;
}

sst_code sst__embed_query(sst_store *st, const char *query, float **vector, sst_error *err) {
    float *out = sst__malloc(st->dims * sizeof(float));
    if (out == NULL) {
        return sst__enomem(err);
    }
    const char *texts[1] = {query};
    sst_code rc = call_hook(st, "store search", texts, 1, out, err);
    if (rc != SST_OK) {
        sst__free(out);
        out = NULL;
    }
    *vector = out;
    return rc;
}
