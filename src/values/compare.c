/* SPDX-License-Identifier: MIT */
/*
 * Deep equality and the stable hash. Both treat numbers by value (1 == 1.0)
 * and objects as unordered member sets, and agree: equal values hash equally.
 * The hash uses no per-process seed, so it is the same in every run and on
 * every platform (bytes are read little-endian).
 */
#include <math.h>
#include <string.h>

#include "values_int.h"

#define K_MUL 0x9E3779B97F4A7C15ull

static inline uint64_t rotl(uint64_t x, int r) {
    return (x << r) | (x >> (64 - r));
}

/* Integral doubles in int64 range equal (and hash as) the integer. */
static bool double_as_int(double d, int64_t *out) {
    if (d >= -9223372036854775808.0 && d < 9223372036854775808.0 && floor(d) == d) {
        *out = (int64_t)d;
        return true;
    }
    return false;
}

static bool number_equal(const sst_value *a, const sst_value *b) {
    if (a->type == SST_TYPE_INT && b->type == SST_TYPE_INT) {
        return ((const sst__int *)a)->i == ((const sst__int *)b)->i;
    }
    if (a->type == SST_TYPE_DOUBLE && b->type == SST_TYPE_DOUBLE) {
        return ((const sst__double *)a)->d == ((const sst__double *)b)->d;
    }
    const sst__int *i = (const sst__int *)(a->type == SST_TYPE_INT ? a : b);
    const sst__double *d = (const sst__double *)(a->type == SST_TYPE_INT ? b : a);
    int64_t as_int;
    return double_as_int(d->d, &as_int) && as_int == i->i;
}

bool sst_value_equal(const sst_value *a, const sst_value *b) {
    if (a == b) {
        return true;
    }
    if (a == NULL || b == NULL) {
        return false;
    }
    if (sst_is_number(a) && sst_is_number(b)) {
        return number_equal(a, b);
    }
    if (a->type != b->type) {
        return false;
    }
    switch ((sst_type)a->type) {
        case SST_TYPE_NULL:
            return true;
        case SST_TYPE_BOOL:
            return sst_bool_value(a) == sst_bool_value(b);
        case SST_TYPE_STRING:
            return sst__str(a)->len == sst__str(b)->len &&
                   memcmp(sst__str(a)->data, sst__str(b)->data, sst__str(a)->len) == 0;
        case SST_TYPE_ARRAY: {
            if (sst_array_len(a) != sst_array_len(b)) {
                return false;
            }
            sst_array_iter ia, ib;
            sst_array_iter_init(&ia, a);
            sst_array_iter_init(&ib, b);
            const sst_value *x;
            while ((x = sst_array_iter_next(&ia)) != NULL) {
                if (!sst_value_equal(x, sst_array_iter_next(&ib))) {
                    return false;
                }
            }
            return true;
        }
        case SST_TYPE_OBJECT: {
            const sst__object *oa = (const sst__object *)a;
            const sst__object *ob = (const sst__object *)b;
            if (oa->count != ob->count) {
                return false;
            }
            for (size_t i = 0; i < oa->count; i++) {
                const sst__string *k = sst__str(oa->members[i].key);
                size_t j = sst__object_find(ob, k->data, k->len);
                if (j == SIZE_MAX || !sst_value_equal(oa->members[i].val, ob->members[j].val)) {
                    return false;
                }
            }
            return true;
        }
        default:
            return false;
    }
}

uint64_t sst_value_hash(const sst_value *v) {
    if (v == NULL) {
        return 0;
    }
    switch ((sst_type)v->type) {
        case SST_TYPE_NULL:
            return 0x6e756c6cull;
        case SST_TYPE_BOOL:
            return sst_bool_value(v) ? 0x74727565ull : 0x66616c73ull;
        case SST_TYPE_INT:
        case SST_TYPE_DOUBLE: {
            int64_t i;
            if (v->type == SST_TYPE_INT) {
                i = ((const sst__int *)v)->i;
            } else if (!double_as_int(((const sst__double *)v)->d, &i)) {
                double d = ((const sst__double *)v)->d;
                uint64_t bits;
                memcpy(&bits, &d, sizeof bits);
                return sst__hash_mix(bits ^ 0x646f75626c65ull);
            }
            return sst__hash_mix((uint64_t)i ^ 0x696e7465676572ull);
        }
        case SST_TYPE_STRING:
            return sst__hash_bytes(sst__str(v)->data, sst__str(v)->len, 0x737472696e67ull);
        case SST_TYPE_ARRAY: {
            uint64_t h = 0x6172726179ull ^ sst_array_len(v);
            sst_array_iter it;
            sst_array_iter_init(&it, v);
            const sst_value *e;
            while ((e = sst_array_iter_next(&it)) != NULL) {
                h = sst__hash_mix(rotl(h, 31) ^ sst_value_hash(e));
            }
            return h;
        }
        case SST_TYPE_OBJECT: {
            /* Order-independent: a sum of per-member hashes. */
            const sst__object *o = (const sst__object *)v;
            uint64_t sum = 0;
            for (size_t i = 0; i < o->count; i++) {
                uint64_t hk = sst_value_hash(o->members[i].key);
                sum += sst__hash_mix(hk * K_MUL ^ sst_value_hash(o->members[i].val));
            }
            return sst__hash_mix(sum ^ (0x6f626a656374ull + o->count));
        }
    }
    return 0;
}
