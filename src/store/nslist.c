/* SPDX-License-Identifier: MIT */
/*
 * list_namespaces for the provided backends (LangGraph's
 * _handle_list_namespaces and _does_match): the namespaces a backend feeds
 * in are matched against the prefix and suffix conditions ("*" is any one
 * label), cut to max_depth, sorted as Python sorts tuples, deduplicated and
 * paged.
 */
#include <string.h>

#include "store_int.h"

bool sst__ns_match_prefix(const char *const *ns, size_t ns_len, const char *const *pat,
                          size_t pat_len) {
    if (ns_len < pat_len) {
        return false;
    }
    for (size_t i = 0; i < pat_len; i++) {
        if (strcmp(pat[i], "*") != 0 && strcmp(pat[i], ns[i]) != 0) {
            return false;
        }
    }
    return true;
}

bool sst__ns_match_suffix(const char *const *ns, size_t ns_len, const char *const *pat,
                          size_t pat_len) {
    if (ns_len < pat_len) {
        return false;
    }
    return sst__ns_match_prefix(ns + (ns_len - pat_len), pat_len, pat, pat_len);
}

void sst__nslist_init(sst__nslist *l, const sst_store_list_opts *q) {
    memset(l, 0, sizeof *l);
    l->q = q;
}

/* One allocation: n + 1 label pointers, then the labels. */
static char **labels_copy(const char *const *ns, size_t n) {
    size_t bytes = (n + 1) * sizeof(char *);
    for (size_t i = 0; i < n; i++) {
        bytes += strlen(ns[i]) + 1;
    }
    char **out = sst__malloc(bytes);
    if (out == NULL) {
        return NULL;
    }
    char *at = (char *)(out + n + 1);
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(ns[i]) + 1;
        memcpy(at, ns[i], len);
        out[i] = at;
        at += len;
    }
    out[n] = NULL;
    return out;
}

void sst__nslist_add(sst__nslist *l, const char *const *ns, size_t ns_len) {
    const sst_store_list_opts *q = l->q;
    if (l->oom ||
        (q->prefix_len > 0 && !sst__ns_match_prefix(ns, ns_len, q->prefix, q->prefix_len)) ||
        (q->suffix_len > 0 && !sst__ns_match_suffix(ns, ns_len, q->suffix, q->suffix_len))) {
        return;
    }
    size_t n = q->max_depth > 0 && ns_len > q->max_depth ? q->max_depth : ns_len;
    if (l->n == l->cap && !sst__grow((void **)&l->ns, &l->cap, l->n, sizeof *l->ns, 16)) {
        l->oom = true;
        return;
    }
    char **copy = labels_copy(ns, n);
    if (copy == NULL) {
        l->oom = true;
        return;
    }
    l->ns[l->n++] = copy;
}

/* Python's tuple order: label by label, a prefix before the longer tuple. */
static int tuple_cmp(const void *pa, const void *pb) {
    char *const *a = *(char **const *)pa, *const *b = *(char **const *)pb;
    for (size_t i = 0;; i++) {
        if (a[i] == NULL || b[i] == NULL) {
            return (a[i] != NULL) - (b[i] != NULL);
        }
        int c = strcmp(a[i], b[i]);
        if (c != 0) {
            return c;
        }
    }
}

sst_code sst__nslist_emit(sst__nslist *l, sst_store_ns_fn each, void *user_data, sst_error *err) {
    sst_code rc = l->oom ? sst__enomem(err) : SST_OK;
    if (rc == SST_OK && l->n > 1) {
        qsort(l->ns, l->n, sizeof *l->ns, tuple_cmp);
    }
    size_t distinct = 0, sent = 0;
    for (size_t i = 0; rc == SST_OK && i < l->n && sent < l->q->limit; i++) {
        if (i > 0 && tuple_cmp(&l->ns[i - 1], &l->ns[i]) == 0) {
            continue;
        }
        if (distinct++ < l->q->offset) {
            continue;
        }
        size_t len = 0;
        while (l->ns[i][len] != NULL) {
            len++;
        }
        rc = each(user_data, (const char *const *)l->ns[i], len, err);
        sent++;
    }
    for (size_t i = 0; i < l->n; i++) {
        sst__free(l->ns[i]);
    }
    sst__free(l->ns);
    memset(l, 0, sizeof *l);
    return rc;
}
