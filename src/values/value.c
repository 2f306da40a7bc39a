/* SPDX-License-Identifier: MIT */
/*
 * Value headers, reference counting, the immortal singletons, scalars and
 * strings. Containers live in array.c and object.c.
 *
 * Freeing never recurses over values: a dying value is chained on a local
 * "dead" list through its (no longer needed) reference-count word, so a
 * million-deep nesting frees in constant stack.
 */
#include <math.h>
#include <string.h>

#include "values_int.h"

#define IMMORTAL_HDR(t)                                                                            \
    { .u = {.rc = SIZE_MAX}, .type = (t), .flags = SST__IMMORTAL }

static sst_value g_null = IMMORTAL_HDR(SST_TYPE_NULL);
static sst__bool g_true = {IMMORTAL_HDR(SST_TYPE_BOOL), true};
static sst__bool g_false = {IMMORTAL_HDR(SST_TYPE_BOOL), false};
static sst__array g_empty_array = {
    IMMORTAL_HDR(SST_TYPE_ARRAY), 0, SST__PV_BITS, NULL, NULL, NULL, NULL};
static sst__object g_empty_object = {IMMORTAL_HDR(SST_TYPE_OBJECT), 0, 0, NULL, NULL, 0};
/* The empty string needs room for its NUL after the flexible member. */
static union {
    sst__string s;
    char room[sizeof(sst__string) + 1];
} g_empty_string = {.s = {IMMORTAL_HDR(SST_TYPE_STRING), 0}};

/*
 * Immortal integers -128..1023: counters, token counts, indexes and small
 * enums are the common integers, and sharing them saves an allocation each.
 */
#define SMALL_INT_MIN (-128)
#define SMALL_INT_MAX 1023
#define SI1(n)        {IMMORTAL_HDR(SST_TYPE_INT), (int64_t)(n) + SMALL_INT_MIN},
#define SI2(n)        SI1(n) SI1((n) + 1)
#define SI4(n)        SI2(n) SI2((n) + 2)
#define SI8(n)        SI4(n) SI4((n) + 4)
#define SI16(n)       SI8(n) SI8((n) + 8)
#define SI32(n)       SI16(n) SI16((n) + 16)
#define SI64(n)       SI32(n) SI32((n) + 32)
#define SI128(n)      SI64(n) SI64((n) + 64)
#define SI256(n)      SI128(n) SI128((n) + 128)
#define SI512(n)      SI256(n) SI256((n) + 256)
#define SI1024(n)     SI512(n) SI512((n) + 512)
static sst__int g_small_ints[SMALL_INT_MAX - SMALL_INT_MIN + 1] = {SI1024(0) SI128(1024)};

sst_value *sst_null(void) {
    return &g_null;
}

sst_value *sst_bool(bool b) {
    return b ? &g_true.h : &g_false.h;
}

sst_value *sst_string_empty(void) {
    return &g_empty_string.s.h;
}

sst_value *sst_array_empty(void) {
    return &g_empty_array.h;
}

sst_value *sst_object_empty(void) {
    return &g_empty_object.h;
}

const char *sst_type_name(sst_type type) {
    switch (type) {
        case SST_TYPE_NULL:
            return "null";
        case SST_TYPE_BOOL:
            return "boolean";
        case SST_TYPE_INT:
            return "integer";
        case SST_TYPE_DOUBLE:
            return "double";
        case SST_TYPE_STRING:
            return "string";
        case SST_TYPE_ARRAY:
            return "array";
        case SST_TYPE_OBJECT:
            return "object";
    }
    return "unknown";
}

void *sst__value_alloc(size_t size, sst_type type) {
    sst_value *v = sst__malloc(size);
    if (v != NULL) {
        atomic_init(&v->u.rc, 1);
        v->type = (uint8_t)type;
        v->flags = 0;
        v->chunk_off = 0;
    }
    return v;
}

sst_value *sst_value_ref(const sst_value *cv) {
    sst_value *v = (sst_value *)cv; /* references are counted, never written through */
    if (v != NULL && !sst__immortal(v)) {
        atomic_fetch_add_explicit(&v->u.rc, 1, memory_order_relaxed);
    }
    return v;
}

void sst__unref_into(sst_value *v, sst_value **dead) {
    if (v == NULL || sst__immortal(v)) {
        return;
    }
    if (atomic_fetch_sub_explicit(&v->u.rc, 1, memory_order_acq_rel) == 1) {
        v->u.next_dead = *dead;
        *dead = v;
    }
}

void sst__value_destroy(sst_value *v) {
    sst_value *dead = v;
    v->u.next_dead = NULL;
    while (dead != NULL) {
        sst_value *cur = dead;
        dead = cur->u.next_dead;
        switch ((sst_type)cur->type) {
            case SST_TYPE_ARRAY:
                sst__array_release((sst__array *)cur, &dead);
                break;
            case SST_TYPE_OBJECT:
                sst__object_release((sst__object *)cur, &dead);
                break;
            default:
                break;
        }
        sst__value_free_block(cur);
    }
}

void sst_value_unref(sst_value *v) {
    if (v == NULL || sst__immortal(v)) {
        return;
    }
    if (atomic_fetch_sub_explicit(&v->u.rc, 1, memory_order_acq_rel) == 1) {
        sst__value_destroy(v);
    }
}

bool sst_value_is_unique(const sst_value *v) {
    return v != NULL && !sst__immortal(v) &&
           atomic_load_explicit(&((sst_value *)v)->u.rc, memory_order_acquire) == 1;
}

sst_value *sst__int_new_in(sst__arena *a, int64_t i) {
    if (i >= SMALL_INT_MIN && i <= SMALL_INT_MAX) {
        return &g_small_ints[i - SMALL_INT_MIN].h;
    }
    sst__int *v = sst__arena_value(a, sizeof *v, SST_TYPE_INT);
    if (v != NULL) {
        v->i = i;
    }
    return v != NULL ? &v->h : NULL;
}

sst_value *sst_int_new(int64_t i, sst_error *err) {
    sst_value *v = sst__int_new_in(NULL, i);
    if (v == NULL) {
        sst__enomem(err);
    }
    return v;
}

sst_value *sst__double_new_in(sst__arena *a, double d) {
    sst__double *v = sst__arena_value(a, sizeof *v, SST_TYPE_DOUBLE);
    if (v != NULL) {
        v->d = d;
    }
    return v != NULL ? &v->h : NULL;
}

sst_value *sst_double_new(double d, sst_error *err) {
    if (!isfinite(d)) {
        sst__error(err, SST_ERANGE, "%s is not a JSON number", isnan(d) ? "NaN" : "infinity");
        return NULL;
    }
    sst_value *v = sst__double_new_in(NULL, d);
    if (v == NULL) {
        sst__enomem(err);
    }
    return v;
}

sst_value *sst__string_new_in(sst__arena *a, const char *s, size_t len) {
    if (len == 0) {
        return sst_string_empty();
    }
    if (len > SIZE_MAX - sizeof(sst__string) - 1) {
        return NULL;
    }
    sst__string *v = sst__arena_value(a, sizeof(sst__string) + len + 1, SST_TYPE_STRING);
    if (v == NULL) {
        return NULL;
    }
    v->len = len;
    memcpy(v->data, s, len);
    v->data[len] = '\0';
    return &v->h;
}

sst_value *sst__string_new_trusted(const char *s, size_t len) {
    return sst__string_new_in(NULL, s, len);
}

sst_value *sst_string_newn(const char *s, size_t len, sst_error *err) {
    if (s == NULL && len > 0) {
        sst__error(err, SST_EINVAL, "string: NULL text with length %zu", len);
        return NULL;
    }
    size_t bad = 0;
    if (!sst__utf8_valid(s, len, &bad)) {
        sst__error(err, SST_EUTF8, "string: invalid UTF-8 byte 0x%02X at offset %zu",
                   (unsigned)(unsigned char)s[bad], bad);
        return NULL;
    }
    sst_value *v = sst__string_new_trusted(s, len);
    if (v == NULL) {
        sst__enomem(err);
    }
    return v;
}

sst_value *sst_string_new(const char *s, sst_error *err) {
    if (s == NULL) {
        sst__error(err, SST_EINVAL, "string: NULL text");
        return NULL;
    }
    return sst_string_newn(s, strlen(s), err);
}

sst_type sst_value_type(const sst_value *v) {
    return v == NULL ? SST_TYPE_NULL : (sst_type)v->type;
}

bool sst_is_null(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_NULL;
}
bool sst_is_bool(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_BOOL;
}
bool sst_is_int(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_INT;
}
bool sst_is_double(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_DOUBLE;
}
bool sst_is_number(const sst_value *v) {
    return v != NULL && (v->type == SST_TYPE_INT || v->type == SST_TYPE_DOUBLE);
}
bool sst_is_string(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_STRING;
}
bool sst_is_array(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_ARRAY;
}
bool sst_is_object(const sst_value *v) {
    return v != NULL && v->type == SST_TYPE_OBJECT;
}

bool sst_bool_value(const sst_value *v) {
    return sst_is_bool(v) && ((const sst__bool *)v)->b;
}

int64_t sst_int_value(const sst_value *v) {
    return sst_is_int(v) ? ((const sst__int *)v)->i : 0;
}

double sst_double_value(const sst_value *v) {
    return sst_is_double(v) ? ((const sst__double *)v)->d : 0.0;
}

double sst_number_value(const sst_value *v) {
    if (sst_is_int(v)) {
        return (double)((const sst__int *)v)->i;
    }
    return sst_double_value(v);
}

const char *sst_string_cstr(const sst_value *v) {
    return sst_is_string(v) ? sst__str(v)->data : "";
}

size_t sst_string_len(const sst_value *v) {
    return sst_is_string(v) ? sst__str(v)->len : 0;
}
