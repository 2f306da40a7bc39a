/* SPDX-License-Identifier: MIT */
/*
 * Parse arenas: the values of one large JSON parse are carved from 64 KiB
 * chunks, which makes a parse several times cheaper in allocator calls than
 * one malloc per value (a 6 MB document has ~180 000 values).
 *
 * Each chunk starts with a count of its live values. A value records its
 * offset in the chunk (sst_value.chunk_off) and, when it dies, drops the
 * chunk's count; the last one frees the chunk. While the parser still owns
 * a chunk the count holds a large bias, so values freed during the parse
 * (a replaced duplicate key, cleanup after an error) never reach zero; when
 * the parser lets go it adds the number of values it carved, minus the bias,
 * in one atomic step.
 *
 * Cost: a chunk stays alive while any of its values does. The reader uses
 * arenas only for large inputs (checkpoints and states that live together),
 * never for small ones such as LLM replies whose parts outlive the rest.
 */
#include "values_int.h"

#define CHUNK_BYTES     ((size_t)64 << 10)
#define CHUNK_BIAS      ((size_t)1 << (sizeof(size_t) * 8 - 2))
#define MAX_ARENA_VALUE (CHUNK_BYTES / 8) /* bigger values get their own block */

typedef struct chunk_hdr {
    atomic_size_t live;
    size_t pad; /* keeps values 16-byte aligned */
} chunk_hdr;

void sst__arena_init(sst__arena *a) {
    a->chunk = NULL;
    a->used = 0;
    a->count = 0;
}

/* Drops @p n references to @p chunk (n may be "minus the bias"); frees it at zero. */
static void chunk_release(unsigned char *chunk, size_t n) {
    chunk_hdr *h = (chunk_hdr *)(void *)chunk;
    if (atomic_fetch_sub_explicit(&h->live, n, memory_order_acq_rel) == n) {
        sst__free(chunk);
    }
}

void sst__arena_finish(sst__arena *a) {
    if (a->chunk != NULL) {
        /* live = bias - freed; subtract (bias - count) to leave count - freed. */
        chunk_release(a->chunk, CHUNK_BIAS - a->count);
    }
    sst__arena_init(a);
}

void *sst__arena_value(sst__arena *a, size_t size, sst_type type) {
    size = (size + 15) & ~(size_t)15;
    if (a == NULL || size > MAX_ARENA_VALUE) {
        return sst__value_alloc(size, type);
    }
    if (a->chunk == NULL || CHUNK_BYTES - a->used < size) {
        unsigned char *chunk = sst__malloc(CHUNK_BYTES);
        if (chunk == NULL) {
            return NULL;
        }
        sst__arena_finish(a);
        atomic_init(&((chunk_hdr *)(void *)chunk)->live, CHUNK_BIAS);
        a->chunk = chunk;
        a->used = sizeof(chunk_hdr);
    }
    sst_value *v = (sst_value *)(void *)(a->chunk + a->used);
    atomic_init(&v->u.rc, 1);
    v->type = (uint8_t)type;
    v->flags = SST__ARENA;
    v->chunk_off = (uint32_t)a->used;
    a->used += size;
    a->count++;
    return v;
}

void sst__value_free_block(sst_value *v) {
    if (v->flags & SST__ARENA) {
        chunk_release((unsigned char *)v - v->chunk_off, 1);
    } else {
        sst__free(v);
    }
}
