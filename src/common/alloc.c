/* SPDX-License-Identifier: MIT */
/*
 * The replaceable allocator (STYLE rule 16). The hooks are the only mutable
 * global state of the library; they are set once at start-up, before any
 * thread exists, so plain reads are race-free.
 */
#include <string.h>

#include "common.h"

static sst_malloc_fn g_malloc = malloc;
static sst_realloc_fn g_realloc = realloc;
static sst_free_fn g_free = free;

sst_code sst_set_allocator(sst_malloc_fn m, sst_realloc_fn r, sst_free_fn f) {
    if (m == NULL || r == NULL || f == NULL) {
        return SST_EINVAL;
    }
    g_malloc = m;
    g_realloc = r;
    g_free = f;
    return SST_OK;
}

void *sst__malloc(size_t size) {
    return g_malloc(size ? size : 1);
}

void *sst__calloc(size_t n, size_t size) {
    if (size != 0 && n > SIZE_MAX / size) {
        return NULL;
    }
    void *p = sst__malloc(n * size);
    if (p != NULL) {
        memset(p, 0, n * size);
    }
    return p;
}

void *sst__realloc(void *ptr, size_t size) {
    return g_realloc(ptr, size ? size : 1);
}

void sst__free(void *ptr) {
    if (ptr != NULL) {
        g_free(ptr);
    }
}

void sst_free(void *ptr) {
    sst__free(ptr);
}

char *sst__strndup(const char *s, size_t len) {
    char *p = sst__malloc(len + 1);
    if (p != NULL) {
        memcpy(p, s, len);
        p[len] = '\0';
    }
    return p;
}
