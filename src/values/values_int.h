/* SPDX-License-Identifier: MIT */
/*
 * Private layout of sst_value and helpers shared by the values layer.
 *
 * Every value starts with `struct sst_value`: an atomic reference count and a
 * type tag. Immortal singletons carry SST__IMMORTAL and are never counted.
 * Arrays are persistent vectors (array.c), objects are member arrays with a
 * hash index above SST__OBJECT_INDEX_MIN members (object.c).
 */
#ifndef SUPERSTEP_VALUES_INT_H
#define SUPERSTEP_VALUES_INT_H

#include <stdatomic.h>

#include "common.h"
#include "common/utf8.h"
#include "superstep/value.h"

#define SST__IMMORTAL 0x1u
#define SST__ARENA    0x2u /* carved from a parser chunk (arena.c), not malloc'd alone */

struct sst_value {
    /*
     * While alive: the reference count. Once it reached zero the value is
     * owned by the freeing thread, which reuses the word to chain dead
     * values (value.c), so freeing deep trees needs no recursion.
     */
    union {
        atomic_size_t rc;
        struct sst_value *next_dead;
    } u;
    uint8_t type;       /* sst_type */
    uint8_t flags;      /* SST__IMMORTAL, SST__ARENA */
    uint32_t chunk_off; /* SST__ARENA: byte offset of the value in its chunk */
};

typedef struct sst__int {
    sst_value h;
    int64_t i;
} sst__int;

typedef struct sst__double {
    sst_value h;
    double d;
} sst__double;

typedef struct sst__string {
    sst_value h;
    size_t len;
    char data[]; /* len bytes + NUL */
} sst__string;

#define SST__PV_BITS  5
#define SST__PV_WIDTH 32
#define SST__PV_MASK  31

/*
 * A node of a persistent vector, shared between array versions. At level 0
 * (leaves and the tail) slots hold sst_value references; above, they hold
 * child nodes. Unused slots are NULL. Trie nodes have 32 slots; a tail may
 * have fewer (1..32, growing by doubling), so small arrays stay small.
 */
typedef struct sst__pvnode {
    atomic_size_t rc;
    size_t cap; /* slots */
    void *slot[];
} sst__pvnode;

typedef struct sst__array {
    sst_value h;
    size_t count;
    unsigned shift;    /* level of root: 5 * (height) */
    sst__pvnode *root; /* trie of the first tailoff(count) elements; may be NULL */
    sst__pvnode *tail; /* the last 1..32 elements; NULL when empty */
    const sst_attachment_type *att_type; /* the attachment's type, or NULL */
    void *att;                           /* one reference to the attached data */
} sst__array;

typedef struct sst__member {
    sst_value *key; /* owned string value */
    sst_value *val; /* owned */
} sst__member;

#define SST__OBJECT_INDEX_MIN 8

typedef struct sst__object {
    sst_value h;
    size_t count;
    size_t cap;
    sst__member *members; /* owned: inline right after the struct, or sst__malloc'd */
    uint32_t *index;      /* owned hash index (member + 1, 0 = empty) or NULL */
    size_t index_cap;     /* power of two, >= 2 * count, 0 without index */
} sst__object;

typedef struct sst__bool {
    sst_value h;
    bool b;
} sst__bool;

static inline bool sst__immortal(const sst_value *v) {
    return (v->flags & SST__IMMORTAL) != 0;
}

static inline const sst__string *sst__str(const sst_value *v) {
    return (const sst__string *)v;
}

/*
 * Adds a reference to a value no other thread can see yet (made by the
 * caller and not published). A plain load and store instead of a locked
 * read-modify-write: on x86 that is ~20x cheaper, and the parser does it for
 * every repeated object key. Publication (returning the value, a mutex, a
 * queue) orders it before any other thread's access.
 */
static inline void sst__ref_unpublished(sst_value *v) {
    if (!sst__immortal(v)) {
        size_t rc = atomic_load_explicit(&v->u.rc, memory_order_relaxed);
        atomic_store_explicit(&v->u.rc, rc + 1, memory_order_relaxed);
    }
}

/* Allocates a value header of @p size bytes with refcount 1. */
void *sst__value_alloc(size_t size, sst_type type);

/*
 * A parse arena (arena.c): values of one large parse are carved from 64 KiB
 * chunks instead of one malloc each. A chunk counts its live values and is
 * freed with the last of them, on whatever thread that happens.
 */
typedef struct sst__arena {
    unsigned char *chunk; /* current chunk, or NULL */
    size_t used;          /* bytes used in it */
    size_t count;         /* values carved from it */
} sst__arena;

void sst__arena_init(sst__arena *a);
/* A value header of @p size bytes with refcount 1, from @p a (NULL: malloc). NULL on OOM. */
void *sst__arena_value(sst__arena *a, size_t size, sst_type type);
/* Hands the current chunk over to its values; call once the parse is over. */
void sst__arena_finish(sst__arena *a);
/* Frees the memory of a dead value (its chunk's share, or the block). */
void sst__value_free_block(sst_value *v);

/* New values from an arena (NULL: malloc); NULL on OOM. Strings are not validated. */
sst_value *sst__string_new_in(sst__arena *a, const char *s, size_t len);
sst_value *sst__int_new_in(sst__arena *a, int64_t i);
sst_value *sst__double_new_in(sst__arena *a, double d); /* d must be finite */

/* A new string of @p len bytes copied from @p s, not validated. */
sst_value *sst__string_new_trusted(const char *s, size_t len);

/*
 * UTF-8 validation. Returns true when @p s[0..len) is valid UTF-8 without
 * surrogates or overlongs; otherwise false with *bad set to the offset of the
 * first invalid byte.
 */
bool sst__utf8_valid(const char *s, size_t len, size_t *bad);
/* Frees a value whose reference count reached zero (value.c). */
void sst__value_destroy(sst_value *v);

/* Container destructors: release children onto the dead list. */
void sst__array_release(sst__array *a, sst_value **dead);
void sst__object_release(sst__object *o, sst_value **dead);
/* Drops one reference and chains the value on @p dead when it was the last. */
void sst__unref_into(sst_value *v, sst_value **dead);

/*
 * Bulk builders for the parser. Both consume every reference they are given,
 * also on failure, and return NULL only on out of memory.
 * sst__array_from: @p items[0..n) in order.
 * sst__object_from: @p kv[2i] is a key (string value), kv[2i+1] its value;
 * a repeated key keeps its first position and its last value.
 */
sst_value *sst__array_from(sst__arena *arena, sst_value **items, size_t n);
sst_value *sst__object_from(sst__arena *arena, sst_value **kv, size_t n);

/* Member lookup; returns the index or SIZE_MAX. */
size_t sst__object_find(const sst__object *o, const char *key, size_t len);

#endif /* SUPERSTEP_VALUES_INT_H */
